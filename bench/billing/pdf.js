/**
 * Invoice PDF (issue #32, docs/api/invoice-documents.md, ADR 0045): "a 50-line invoice's PDF p95 <
 * 300 ms on first render and served from storage afterwards".
 *
 *   npx tsc -b tsconfig.build.json && RUNS=3 node bench/billing/pdf.js
 *
 * How billing makes the PDF (services/billing/src/documents/): finalizing an invoice records a
 * snapshot (the invoice as the API shows it, the seller, the buyer, its payments) in
 * `invoice_documents`, in the finalizing transaction; nothing is rendered then. The first
 * `GET /v1/invoices/{id}/pdf` renders the PDF from that snapshot (pdfkit, fonts embedded as
 * subsets) and stores it in the same row (`pdf`, `rendered_at`); every later request answers
 * the stored bytes. So "first render" is the first request of each invoice, and that is what
 * this bench times.
 *
 * Per run, on fresh processes (customer, wallet, ingestion-aggregator, billing, gateway: their
 * dist/main.js with the Dockerfile's node flags, bench/billing/stack.js) on one database:
 *   set-up (not timed), through the gateway: the seller (`invoice_settings`), once; a MONTHLY
 *     plan of 50 FIXED ADVANCE prices (display names of 30-50 characters, amounts 1.00-50.99),
 *     once; INVOICES customers with a name, an email and an address (waits until billing's
 *     customer projection has them: the snapshot's buyer), one subscription each (its
 *     SUBSCRIPTION_CREATE draft has the 50 lines), then `POST /v1/invoices/{id}/finalize`.
 *   first: `GET /v1/invoices/{id}/pdf` of each invoice once, one request at a time, through
 *     the gateway (the first is the first PDF of a fresh billing process: it reads the fonts).
 *   repeat: REPEATS more requests per invoice, one at a time.
 *   ceiling: as many `GET /v1/customers/{id}` (a minimal request proxied by the gateway), one
 *     at a time: what a request costs without any document work.
 * Checked: every answer 200 application/pdf, 50 lines on the invoice; every repeat byte-identical
 * to its first answer and to the stored `invoice_documents.pdf`; `rendered_at` set once by the
 * first pass and unchanged by the repeats; the repeats' billing CPU per request is that of a
 * stored read, not of a render (reported beside the first pass's).
 * CPU per request per process: /proc/<pid>/stat of the node processes and of the Postgres
 * backends of the bench's database (bench/billing/stack.js), over each pass.
 *
 * Settings: RUNS (3), INVOICES (60), REPEATS (5), LINES (50), KAFKA_BROKERS (unset:
 * 127.0.0.1:9092, started when nothing listens there), KAFKA_MATCH (a string of the bench
 * broker's command line: its CPU is counted), PROFILE=billing (CPU profile of billing over the
 * first pass), KEEP_DB=1.
 */
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const { Client } = require('pg');
const { apiClient, inParallel, adminQuery, percentile, sleep, summarizeProfile } = require('../common');
const { kafkaBrokers, startStack, cpuAccount, cpuMsPer } = require('./stack');

const RUNS = Number(process.env.RUNS || 3);
const INVOICES = Number(process.env.INVOICES || 60);
const REPEATS = Number(process.env.REPEATS || 5);
const LINES = Number(process.env.LINES || 50);
const PROFILE = process.env.PROFILE || '';
const round1 = (x) => Math.round(x * 10) / 10;
const sha = (b) => crypto.createHash('sha256').update(b).digest('hex');

const BILLING_ENV = { BILLING_INTERVAL_MS: '0', UNBILLED_SWEEP_MS: '0' };

/** A raw GET through the gateway: status, type, bytes, milliseconds. */
async function getRaw(api, p) {
  const t = performance.now();
  const res = await api.pool.request({ method: 'GET', path: p, headers: { authorization: `Bearer ${api.key}` } });
  const bytes = Buffer.from(await res.body.arrayBuffer());
  return { ms: performance.now() - t, status: res.statusCode, type: String(res.headers['content-type'] || ''), bytes };
}

const stats = (ms) => {
  const s = [...ms].sort((a, b) => a - b);
  return { n: s.length, p50: round1(percentile(s, 50)), p95: round1(percentile(s, 95)), p99: round1(percentile(s, 99)), max: round1(s.at(-1)) };
};

async function seedOnce(api) {
  const put = await api.call('PUT', '/v1/settings/billing', {
    invoice_settings: { company_name: 'Bench Seller GmbH', address: '1 Harbour Road\n20457 Hamburg\nGermany', tax_id: 'DE123456789', footer: 'Thank you for your business.' },
  });
  if (put.status !== 200) throw new Error(`settings: ${put.status} ${JSON.stringify(put.body)}`);
  const prices = Array.from({ length: LINES }, (_, k) => ({
    type: 'FIXED',
    currency: 'usd',
    amount: `${1 + k}.${String((k * 37) % 100).padStart(2, '0')}`,
    billing_model: 'FLAT_FEE',
    billing_period: 'MONTHLY',
    invoice_cadence: 'ADVANCE',
    display_name: `Service component ${k + 1}: ${'managed capacity unit'.slice(0, 10 + (k % 12))}`,
  }));
  return (await api.must('POST', '/v1/plans', { name: `PDF bench ${LINES} lines`, prices }, 201)).id;
}

/** INVOICES finalized invoices of LINES lines each, of customers billing's projection knows. */
async function makeInvoices(api, pg, planId, run) {
  const customers = new Array(INVOICES);
  await inParallel(INVOICES, 8, async (i) => {
    customers[i] = (
      await api.must(
        'POST',
        '/v1/customers',
        {
          external_customer_id: `pdf-${run}-${i}-${Date.now()}`,
          name: `Customer ${run}-${i} Trading Company Ltd`,
          email: `billing+${run}-${i}@example.com`,
          address_line1: `${100 + i} Market Street`,
          address_city: 'Springfield',
          address_postal_code: `${10000 + i}`,
          address_country: 'US',
        },
        201,
      )
    ).id;
  });
  for (const deadline = Date.now() + 120_000; ; ) {
    const { rows } = await pg.query('SELECT count(*)::int AS n FROM billing.customers WHERE id = ANY($1) AND name IS NOT NULL', [customers]);
    if (rows[0].n === INVOICES) break;
    if (Date.now() > deadline) throw new Error(`billing's customer projection has ${rows[0].n} of ${INVOICES} customers`);
    await sleep(200);
  }
  const invoices = new Array(INVOICES);
  await inParallel(INVOICES, 8, async (i) => {
    const sub = await api.must('POST', '/v1/subscriptions', { customer_id: customers[i], plan_id: planId }, 201);
    const draft = (await api.must('GET', `/v1/invoices?subscription_id=${sub.id}`, undefined, 200)).items[0];
    if (!draft || draft.line_items.length !== LINES) throw new Error(`subscription ${sub.id}: draft with ${draft?.line_items.length} lines, expected ${LINES}`);
    const fin = await api.must('POST', `/v1/invoices/${draft.id}/finalize`, {}, 200);
    invoices[i] = { id: fin.id, customerId: customers[i] };
  });
  return invoices;
}

async function oneRun(run, brokers, dbName, state) {
  const profileDir = PROFILE ? fs.mkdtempSync(path.join(os.tmpdir(), 'billstream-prof-')) : undefined;
  // Set-up on one stack, measured on a fresh one (the first PDF of a fresh billing process reads its fonts).
  const setupStack = await startStack({ brokers, dbName, create: run === 1, billingEnv: BILLING_ENV, key: state.key });
  state.key = setupStack.key;
  let invoices;
  {
    const api = { ...apiClient(setupStack.url, setupStack.key, { connections: 8 }) };
    const pg = new Client({ connectionString: setupStack.databaseUrl });
    await pg.connect();
    try {
      if (!state.planId) state.planId = await seedOnce(api);
      invoices = await makeInvoices(api, pg, state.planId, run);
    } finally {
      await pg.end();
      await api.pool.close();
      await setupStack.stop(true);
    }
  }
  const stack = await startStack({ brokers, dbName, create: false, billingEnv: BILLING_ENV, key: state.key, profile: PROFILE, profileDir });
  const api = { ...apiClient(stack.url, stack.key, { connections: 1 }), key: stack.key };
  const pg = new Client({ connectionString: stack.databaseUrl });
  await pg.connect();
  const account = cpuAccount({ pids: { gateway: stack.pids.gateway, billing: stack.pids.billing, customer: stack.pids.customer }, dbName, kafkaMatch: process.env.KAFKA_MATCH });
  const problems = [];
  try {
    const ids = invoices.map((i) => i.id);
    const { rows: before } = await pg.query('SELECT count(*)::int AS n FROM billing.invoice_documents WHERE invoice_id = ANY($1) AND pdf IS NULL', [ids]);
    if (before[0].n !== INVOICES) problems.push(`${INVOICES - before[0].n} PDFs stored before their first request`);
    // first render
    const first = new Map();
    const firstMs = [];
    const c0 = account.read();
    for (const inv of invoices) {
      const r = await getRaw(api, `/v1/invoices/${inv.id}/pdf`);
      if (r.status !== 200 || !r.type.startsWith('application/pdf')) throw new Error(`first PDF of ${inv.id}: ${r.status} ${r.type} ${r.bytes.toString('utf8').slice(0, 300)}`);
      first.set(inv.id, r.bytes);
      firstMs.push(r.ms);
    }
    const c1 = account.read();
    const { rows: stored } = await pg.query('SELECT invoice_id, pdf, rendered_at FROM billing.invoice_documents WHERE invoice_id = ANY($1)', [ids]);
    const renderedAt = new Map(stored.map((r) => [r.invoice_id, r.rendered_at?.getTime()]));
    for (const r of stored) {
      if (!r.pdf || !Buffer.from(r.pdf).equals(first.get(r.invoice_id))) problems.push(`${r.invoice_id}: stored PDF differs from the first answer`);
    }
    if (stored.length !== INVOICES) problems.push(`${stored.length} stored documents`);
    // repeats
    const repeatMs = [];
    let identical = 0;
    for (let k = 0; k < REPEATS; k += 1) {
      for (const inv of invoices) {
        const r = await getRaw(api, `/v1/invoices/${inv.id}/pdf`);
        repeatMs.push(r.ms);
        if (r.status === 200 && r.bytes.equals(first.get(inv.id))) identical += 1;
        else problems.push(`${inv.id}: repeat ${k + 1} answered ${r.status}, ${r.bytes.length} bytes not identical`);
      }
    }
    const c2 = account.read();
    const { rows: after } = await pg.query('SELECT invoice_id, rendered_at FROM billing.invoice_documents WHERE invoice_id = ANY($1)', [ids]);
    const moved = after.filter((r) => r.rendered_at?.getTime() !== renderedAt.get(r.invoice_id)).length;
    if (moved > 0) problems.push(`${moved} rendered_at changed by the repeats`);
    // ceiling: a minimal proxied request
    const ceilingMs = [];
    for (let k = 0; k < REPEATS; k += 1) {
      for (const inv of invoices) {
        const r = await getRaw(api, `/v1/customers/${inv.customerId}`);
        if (r.status !== 200) throw new Error(`GET customer: ${r.status}`);
        ceilingMs.push(r.ms);
      }
    }
    const c3 = account.read();
    const sizes = [...first.values()].map((b) => b.length).sort((a, b) => a - b);
    const pages = (first.get(ids[0]).toString('latin1').match(/\/Type \/Page\b/g) || []).length;
    const result = {
      run,
      invoices: INVOICES,
      lines: LINES,
      pdf_bytes: { min: sizes[0], max: sizes.at(-1) },
      pages,
      first: stats(firstMs),
      first_request_of_process_ms: round1(firstMs[0]),
      first_without_process_first: stats(firstMs.slice(1)),
      repeat: stats(repeatMs),
      ceiling_get_customer: stats(ceilingMs),
      cpu_ms_per_first_pdf: cpuMsPer(c0, c1, INVOICES),
      cpu_ms_per_repeat: cpuMsPer(c1, c2, INVOICES * REPEATS),
      cpu_ms_per_ceiling_request: cpuMsPer(c2, c3, INVOICES * REPEATS),
      repeats_identical: `${identical}/${INVOICES * REPEATS}`,
      stored_equal_first: stored.length === INVOICES && !problems.some((p) => p.includes('stored PDF')),
      rendered_at_unchanged: moved === 0,
      sha256_first: sha(first.get(ids[0])).slice(0, 16),
      load_1m_at_end: os.loadavg()[0].toFixed(1),
      ok: problems.length === 0,
      problems: problems.slice(0, 10),
    };
    return result;
  } catch (err) {
    console.error('billing output:', stack.output.billing().slice(-4000));
    throw err;
  } finally {
    account.stop();
    await pg.end();
    await api.pool.close();
    await stack.stop(run < RUNS);
    if (PROFILE) console.log(JSON.stringify({ run, profile: summarizeProfile(profileDir) }, null, 2));
  }
}

async function main() {
  const brokers = await kafkaBrokers();
  const meta = {
    date: new Date().toISOString(),
    cpu: os.cpus()[0]?.model ?? 'unknown',
    cores: os.cpus().length,
    load_at_start: os.loadavg().map((l) => l.toFixed(1)).join(' '),
    brokers,
    runs: RUNS,
    invoices: INVOICES,
    repeats: REPEATS,
    lines: LINES,
  };
  console.log(JSON.stringify(meta));
  const dbName = `bench_pdf_${Date.now().toString(36)}`;
  const state = {};
  const results = [];
  try {
    for (let run = 1; run <= RUNS; run += 1) {
      const r = await oneRun(run, brokers, dbName, state);
      results.push(r);
      console.log(JSON.stringify(r));
    }
  } finally {
    if (!process.env.KEEP_DB) await adminQuery(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
  }
  const worst = (f) => Math.max(...results.map(f));
  console.log(
    JSON.stringify({
      summary: {
        ...meta,
        load_at_end: os.loadavg().map((l) => l.toFixed(1)).join(' '),
        worst_first_p95_ms: worst((r) => r.first.p95),
        worst_repeat_p95_ms: worst((r) => r.repeat.p95),
        worst_ceiling_p95_ms: worst((r) => r.ceiling_get_customer.p95),
        worst_billing_cpu_ms_per_first_pdf: worst((r) => r.cpu_ms_per_first_pdf.billing),
        worst_billing_cpu_ms_per_repeat: worst((r) => r.cpu_ms_per_repeat.billing),
        goal_first_p95_under_300_ms: worst((r) => r.first.p95) < 300 ? 'met' : 'MISSED',
        all_checks_ok: results.every((r) => r.ok),
      },
    }),
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
