/**
 * Threshold check cost (issue #32, docs/api/thresholds.md, ADR 0046): "the threshold check adds
 * at most 10% to ingestion's CPU per stored event, measured in the same run with and without
 * thresholds".
 *
 *   npx tsc -b tsconfig.build.json && RUNS=3 node bench/billing/thresholds.js
 *
 * Where the checks run (services/billing/src/invoices/thresholds.ts): the aggregator publishes a
 * `usage-recorded` notice per customer of each stored batch; billing's unbilled refresher
 * collects the notified customers (UNBILLED_DEBOUNCE_MS, 250 ms) and, per batch of 200, first
 * runs `beforeCompute`, ThresholdBilling.checkCustomers: for each subscription of those
 * customers that has `usage_thresholds` (a partial index finds them), its prices, its
 * period-to-date usage (one aggregator call), the amount compared with the thresholds, and a
 * SUBSCRIPTION_THRESHOLD invoice when one is newly crossed. Then it computes the unbilled usage
 * of the batch (with or without thresholds). The period job also checks every subscription with
 * thresholds on each run (BILLING_INTERVAL_MS, 60 s by default) and the unbilled sweep
 * (UNBILLED_SWEEP_MS, 30 s) notifies every customer with usage subscriptions: those cost per
 * interval, not per event, and are off here (both 0), so the two halves differ only by the
 * per-event path.
 *
 * One stack (customer, wallet, ingestion-aggregator, billing, gateway: dist/main.js with the
 * Dockerfile's node flags, bench/billing/stack.js) on a fresh database.
 * set-up (not timed), through the gateway: meters `calls` (COUNT) and `tokens` (SUM of
 *   `tokens`) on `api_call`; a MONTHLY plan: 10.00 FIXED ADVANCE, 0.01 a call and 0.001 a token
 *   (FLAT_FEE USAGE, eligible for threshold invoices); CUSTOMERS customers in each of two
 *   groups, one subscription each starting now: group `thresholds` with usage_thresholds [t,
 *   2t, 4t] where t = 6.00 + 0.80 x ((37 i) mod CUSTOMERS) (6.00 to 205.20 at 250), group
 *   `plain` without. Each customer gets about 3.55 cents of usage per event, so a few
 *   customers cross a threshold in each run (counted and checked).
 * per run, two halves in the same run, the order alternating between runs (run 1: thresholds
 *   first): EVENTS usage events for one group's customers (round robin, `tokens` 1..50,
 *   timestamps now) sent through the gateway at RATE events/s in bulks of 100; the half ends
 *   when every event is stored (ingestion.event_stats) and billing has been idle for 1 s
 *   (its CPU ticks unchanged over two 500 ms samples: the refresher's last round done).
 * Reported per half: CPU ms per stored event per process (the node processes by pid, the
 *   Postgres backends of the bench's database, the bench's own Kafka broker when KAFKA_MATCH
 *   names it: bench/billing/stack.js), their total with and without the gateway (identical
 *   work in both halves), threshold invoices made; per run the ratio thresholds / plain.
 *   The worst ratio of RUNS runs is the figure (goal <= 1.10).
 * Checked: every event stored once; threshold invoices only for the thresholds group, at least
 *   one over the runs; none for the plain group.
 *
 * Settings: RUNS (3), CUSTOMERS (250 per group), EVENTS (60000 per half), RATE (3000 events/s),
 * KAFKA_BROKERS (unset: 127.0.0.1:9092, started when nothing listens there), KAFKA_MATCH,
 * PROFILE=billing|ingestion-aggregator|... (CPU profile of that process over the whole run), KEEP_DB=1.
 */
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const { Client } = require('pg');
const { apiClient, inParallel, settleSetup, adminQuery, sleep, summarizeProfile } = require('../common');
const { kafkaBrokers, startStack, cpuAccount, cpuMsPer } = require('./stack');

const RUNS = Number(process.env.RUNS || 3);
const CUSTOMERS = Number(process.env.CUSTOMERS || 250);
const EVENTS = Number(process.env.EVENTS || 60_000);
const RATE = Number(process.env.RATE || 3000);
const BULK = 100;
const PROFILE = process.env.PROFILE || '';
const round3 = (x) => Math.round(x * 1000) / 1000;

const thresholdOf = (i) => 600 + ((37 * i) % CUSTOMERS) * 80;

async function setUp(api, pg) {
  const calls = (await api.must('POST', '/v1/meters', { name: 'calls', event_name: 'api_call', aggregation: { type: 'COUNT' } }, 201)).id;
  const tokens = (await api.must('POST', '/v1/meters', { name: 'tokens', event_name: 'api_call', aggregation: { type: 'SUM', field: 'tokens' } }, 201)).id;
  const monthly = { currency: 'usd', billing_model: 'FLAT_FEE', billing_period: 'MONTHLY' };
  const plan = await api.must(
    'POST',
    '/v1/plans',
    {
      name: 'Threshold bench',
      prices: [
        { ...monthly, type: 'FIXED', amount: '10', invoice_cadence: 'ADVANCE' },
        { ...monthly, type: 'USAGE', amount: '0.01', invoice_cadence: 'ARREAR', meter_id: calls },
        { ...monthly, type: 'USAGE', amount: '0.001', invoice_cadence: 'ARREAR', meter_id: tokens },
      ],
    },
    201,
  );
  const groups = { thresholds: [], plain: [] };
  for (const group of Object.keys(groups)) {
    await inParallel(CUSTOMERS, 16, async (i) => {
      const external = `${group}-${i}`;
      const c = await api.must('POST', '/v1/customers', { external_customer_id: external }, 201);
      const body = { customer_id: c.id, plan_id: plan.id };
      if (group === 'thresholds') body.usage_thresholds = [1, 2, 4].map((k) => ({ amount: k * thresholdOf(i) }));
      const s = await api.must('POST', '/v1/subscriptions', body, 201);
      groups[group][i] = { external, customerId: c.id, subscriptionId: s.id };
    });
  }
  await settleSetup(pg, 2 * CUSTOMERS, 'customers and subscriptions');
  return groups;
}

const storedEvents = async (pg) => Number((await pg.query('SELECT coalesce(sum(total_events), 0)::bigint AS n FROM ingestion.event_stats')).rows[0].n);
const thresholdInvoices = async (pg, ids) =>
  (await pg.query("SELECT count(*)::int AS n FROM billing.invoices WHERE billing_reason = 'SUBSCRIPTION_THRESHOLD' AND subscription_id = ANY($1)", [ids])).rows[0].n;

/** Sends EVENTS events of `customers` at RATE events/s, in bulks of BULK; answers the seconds it took. */
async function send(api, customers, prefix) {
  const bulks = Math.ceil(EVENTS / BULK);
  const t0 = performance.now();
  await inParallel(bulks, 8, async (b) => {
    const due = t0 + (b * BULK * 1000) / RATE;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    const ts = new Date().toISOString();
    const parts = [];
    for (let j = b * BULK; j < Math.min(EVENTS, (b + 1) * BULK); j += 1) {
      const c = customers[j % customers.length];
      parts.push(`{"event_id":"${prefix}-${j}","event_name":"api_call","external_customer_id":"${c.external}","timestamp":"${ts}","properties":{"tokens":${(j % 50) + 1}}}`);
    }
    const res = await api.call('POST', '/v1/events/bulk', `{"events":[${parts.join(',')}]}`);
    if (res.status !== 202) throw new Error(`bulk: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
  });
  return (performance.now() - t0) / 1000;
}

/** Until every event is stored, then until billing used no CPU over 1 s (two 500 ms samples). */
async function settle(pg, target, billingPid) {
  const deadline = Date.now() + 300_000;
  while ((await storedEvents(pg)) < target) {
    if (Date.now() > deadline) throw new Error(`events not stored: ${await storedEvents(pg)} of ${target}`);
    await sleep(200);
  }
  const storedAt = Date.now();
  const ticks = () => {
    const stat = fs.readFileSync(`/proc/${billingPid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(f[11]) + Number(f[12]);
  };
  let last = ticks();
  let quiet = 0;
  while (quiet < 2) {
    if (Date.now() > deadline) throw new Error('billing never went idle after the half');
    await sleep(500);
    const now = ticks();
    quiet = now - last <= 1 ? quiet + 1 : 0;
    last = now;
  }
  return (Date.now() - storedAt) / 1000;
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
    customers_per_group: CUSTOMERS,
    events_per_half: EVENTS,
    rate: RATE,
  };
  console.log(JSON.stringify(meta));
  const dbName = `bench_thresholds_${Date.now().toString(36)}`;
  const profileDir = PROFILE ? fs.mkdtempSync(path.join(os.tmpdir(), 'billstream-prof-')) : undefined;
  const stack = await startStack({ brokers, dbName, create: true, billingEnv: { BILLING_INTERVAL_MS: '0', UNBILLED_SWEEP_MS: '0' }, profile: PROFILE, profileDir });
  const api = apiClient(stack.url, stack.key, { connections: 16 });
  const pg = new Client({ connectionString: stack.databaseUrl });
  await pg.connect();
  const results = [];
  let account;
  try {
    const groups = await setUp(api, pg);
    const ids = Object.fromEntries(Object.entries(groups).map(([g, cs]) => [g, cs.map((c) => c.subscriptionId)]));
    const pids = { ...stack.pids };
    account = cpuAccount({ pids, dbName, kafkaMatch: process.env.KAFKA_MATCH });
    const prefix = crypto.randomBytes(4).toString('hex');
    let sent = await storedEvents(pg);
    for (let run = 1; run <= RUNS; run += 1) {
      const order = run % 2 === 1 ? ['thresholds', 'plain'] : ['plain', 'thresholds'];
      const halves = {};
      for (const group of order) {
        const invBefore = { thresholds: await thresholdInvoices(pg, ids.thresholds), plain: await thresholdInvoices(pg, ids.plain) };
        const c0 = account.read();
        const sendS = await send(api, groups[group], `${prefix}-${run}-${group}`);
        sent += EVENTS;
        const tailS = await settle(pg, sent, stack.pids.billing);
        const c1 = account.read();
        const stored = (await storedEvents(pg)) - (sent - EVENTS);
        const invAfter = { thresholds: await thresholdInvoices(pg, ids.thresholds), plain: await thresholdInvoices(pg, ids.plain) };
        const perEvent = cpuMsPer(c0, c1, EVENTS);
        halves[group] = {
          send_s: Math.round(sendS * 10) / 10,
          idle_after_stored_s: Math.round(tailS * 10) / 10,
          stored,
          cpu_ms_per_event: perEvent,
          total_without_gateway: round3(perEvent.total - perEvent.gateway),
          threshold_invoices_made: { thresholds: invAfter.thresholds - invBefore.thresholds, plain: invAfter.plain - invBefore.plain },
        };
        console.log(JSON.stringify({ run, group, ...halves[group] }));
      }
      const ratio = round3(halves.thresholds.cpu_ms_per_event.total / halves.plain.cpu_ms_per_event.total);
      const ratioWithoutGateway = round3(halves.thresholds.total_without_gateway / halves.plain.total_without_gateway);
      const r = { run, order, ...halves, ratio, ratio_without_gateway: ratioWithoutGateway, load_1m_at_end: os.loadavg()[0].toFixed(1) };
      results.push(r);
      console.log(JSON.stringify({ run, ratio, ratio_without_gateway: ratioWithoutGateway }));
    }
    const madeT = results.reduce((n, r) => n + r.thresholds.threshold_invoices_made.thresholds + r.plain.threshold_invoices_made.thresholds, 0);
    const madePlain = results.reduce((n, r) => n + r.thresholds.threshold_invoices_made.plain + r.plain.threshold_invoices_made.plain, 0);
    const problems = [];
    if (madeT === 0) problems.push('no threshold invoice made: thresholds never crossed');
    if (madePlain !== 0) problems.push(`${madePlain} threshold invoices for the plain group`);
    for (const r of results) for (const g of ['thresholds', 'plain']) if (r[g].stored !== EVENTS) problems.push(`run ${r.run} ${g}: ${r[g].stored} stored of ${EVENTS}`);
    const worst = Math.max(...results.map((r) => r.ratio));
    const worstWithoutGateway = Math.max(...results.map((r) => r.ratio_without_gateway));
    console.log(
      JSON.stringify({
        summary: {
          ...meta,
          load_at_end: os.loadavg().map((l) => l.toFixed(1)).join(' '),
          kafka_counted: Boolean(account.kafkaPid()),
          worst_ratio: worst,
          worst_ratio_without_gateway: worstWithoutGateway,
          goal_at_most_1_10: Math.max(worst, worstWithoutGateway) <= 1.1 ? 'met' : 'MISSED',
          threshold_invoices: { thresholds_group: madeT, plain_group: madePlain },
          ok: problems.length === 0,
          problems,
        },
      }),
    );
  } catch (err) {
    console.error('billing output:', stack.output.billing().slice(-4000));
    throw err;
  } finally {
    account?.stop();
    await pg.end();
    await api.pool.close();
    await stack.stop();
    if (PROFILE) console.log(JSON.stringify({ profile: summarizeProfile(profileDir) }, null, 2));
    if (!process.env.KEEP_DB) await adminQuery(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
