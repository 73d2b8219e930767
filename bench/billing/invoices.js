/**
 * One file: a benchmark is one program, read and run top to bottom; its set-up, load, checks and report share the state of one run.
 *
 * Billing invoices (issue #13): closing a period for many subscriptions, and the invoice list.
 *
 *   npx tsc -b tsconfig.build.json && node bench/billing/invoices.js
 *
 * Starts customer, wallet, ingestion-aggregator, billing and gateway as separate processes
 * (their dist/main.js with the Dockerfile's node flags, as deployed) on a fresh database of the
 * local Postgres and Kafka (KAFKA_BROKERS; unset: 127.0.0.1:9092, started with
 * deploy/kafka/kafka.sh when nothing listens there).
 *
 * set-up (once, not timed), through the gateway: two meters on `api_call` (COUNT, and SUM of
 *   `tokens`), a DAILY plan with one FIXED ARREAR price ($10) and two USAGE prices ($0.01 a
 *   call, $0.001 a token), SUBSCRIPTIONS customers, a PRE_PAID wallet of 5 credits for every
 *   second one (default allowed_price_types: USAGE), EVENTS usage events spread evenly over the
 *   customers with timestamps inside the period, then one subscription each (start_date =
 *   period end - 1 day, payment_terms_days 30) whose period ends after the set-up; waits until
 *   every event is stored and every set-up event consumed (with close-features, after its
 *   feature set: features.js), stops the processes and copies the database before each close
 *   (CREATE DATABASE ... TEMPLATE).
 *
 * close (per run, after the period ended): fresh processes on the run's copy; the period job
 *   runs on its schedule (BILLING_INTERVAL_MS=1000, the production path; POST
 *   /v1/cron/bill-subscriptions would hit the gateway's 10 s proxy timeout at this size), so
 *   every subscription is due when billing starts. Timed: from billing's readiness (the job
 *   starts 1 s later) until every SUBSCRIPTION_CYCLE invoice is finalized (polled in
 *   billing.invoices every 100 ms). Checked at the end: SUBSCRIPTIONS cycle invoices, all
 *   finalized with numbers 1..n, 3 lines each, every subtotal equal to the one computed here
 *   from the events sent, min(500 cents, usage lines) of credits applied to exactly the
 *   invoices of customers with a wallet (plus the 1000 cents of the feature set's grant on
 *   every fourth customer, when it was set up), one INVOICE_CREDIT_APPLIED debit per such invoice.
 *   SUBSCRIPTION_RENEWAL_NOTICE_DAYS=0: with DAILY periods every subscription would be "within
 *   3 days of renewal" at every close, which a monthly plan never is at its close.
 *
 * close-features (issue #31; features.js): in the same run, the same close of a second set of
 *   SUBSCRIPTIONS subscriptions (same customers, usage and period, a second plan with the same
 *   prices) where half carry a 10 % coupon, a quarter a RECURRING credit grant and a tenth a
 *   minimum commitment; each set is closed on its own copy of the set-up, on fresh processes
 *   (the order alternates between runs). Timed as close, until every cycle invoice is finalized
 *   and every grant credited for the new period; reported as the ratio features / plain per run
 *   (goal <= 1.3). Checked: discounts, true-ups, credits, grant applications and top-ups.
 *
 * close-taxes (issue #49; taxes.js): in the same run, the same close of the same subscriptions
 *   with taxes on (built-in provider, LINE rounding, one 19 % rate named by the plan), set
 *   through the gateway on a stack of the taxed copy with the period job off, before the timed
 *   close's fresh processes (the plain copy gets the same start and stop, changing nothing); the
 *   order alternates between runs. Reported as the ratio taxed / plain of the CPU per invoice of
 *   all processes but the client (goal <= 1.15), beside each close's ceilings. Checked: every
 *   line's tax = round half up of net × 19 %, total_tax, totals, credits paying lines with tax.
 *   A failed check of any close makes the bench exit 1 (after the README is written).
 *
 * list (after close, same stack): seeds LIST_INVOICES - (invoices made so far) past-period
 *   invoices directly in the billing schema (9 earlier daily periods per subscription, 3 lines
 *   each, statuses mixed: 60 % paid, 30 % finalized, 5 % draft, 5 % voided), ANALYZE, then
 *   GET /v1/invoices through the gateway, one request at a time, LIST_REQUESTS per case after
 *   a warm-up: no filter, customer_id, status=finalized, status=draft, customer_id+status
 *   (default limit 50).
 *
 * RUNS (default 3) runs; each close on its own copy of the set-up and a fresh stack (list on the
 * plain close's); the worst of each figure is reported, and each close's CPU per invoice per
 * process (postgres and kafka counted by process name, so a shared machine's other work too).
 * history (once per set-up, not timed): HISTORY_DAYS (default 1) earlier periods of every
 *   subscription invoiced and paid, written directly (ensureHistory), then the tables analyzed
 *   as autovacuum would have: a close runs on a database that has closed periods before.
 *   HISTORY_DAYS=0: on empty invoice tables, a new deployment's first close.
 *
 * Settings: SUBSCRIPTIONS (10000), EVENTS (1000000), MARGIN_S (240), KEEP_SETUP=1 / SETUP_DB=<db>, LIST_INVOICES (100000),
 * LIST_REQUESTS (300), SCENARIOS (close,close-features,list; close-taxes on demand), BILLING_JOB_CONCURRENCY (billing's default when
 * unset), PROFILE=<service> (CPU profile summary of that process over the run), KEEP_DB=1,
 * WRITE_README=0 (else the figures go to bench/billing/README.md between the RESULTS markers).
 */
const { execFileSync } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { Client } = require('pg');
const { performance } = require('node:perf_hooks');

const features = require('./features');
const taxes = require('./taxes');
const { statements } = require('../limits/report');
const { rawInsert, proxiedFloor } = require('../limits/ceilings');
const { gatewayEnv, apiClient, inParallel, commonServiceEnv, launchAll, settleSetup, cpuSeconds, coresBusy, ADMIN_URL, adminQuery: admin, percentile, sleep, freePort, stopProcess, summarizeProfile } = require('../common');

const ROOT = path.resolve(__dirname, '..', '..');
const README = path.join(__dirname, 'README.md');
const RUNS = Number(process.env.RUNS || 3);
const SUBSCRIPTIONS = Number(process.env.SUBSCRIPTIONS || 10_000);
const EVENTS = Number(process.env.EVENTS || 1_000_000);
const MARGIN_S = Number(process.env.MARGIN_S || 240);
const LIST_INVOICES = Number(process.env.LIST_INVOICES || 100_000);
const LIST_REQUESTS = Number(process.env.LIST_REQUESTS || 300);
const HISTORY_DAYS = Number(process.env.HISTORY_DAYS ?? 1);
const { REAL_INVOICES } = features;
const SCENARIOS = (process.env.SCENARIOS || 'close,close-features,list').split(',');
const FEATURES = SCENARIOS.includes('close-features');
const TAXES = SCENARIOS.includes('close-taxes');
const PROFILE = process.env.PROFILE || '';
// Issue #34: the machine's ceilings measured before each close, on the same minutes (CEILING=0 skips them).
const CEILING = process.env.CEILING !== '0';
const TENANT = 'bench-tenant';
const ENV = 'production';
const WALLET_CREDITS = 5; // 500 cents: less than any invoice, so every wallet invoice takes exactly 500
const DAY_MS = 86_400_000;
const round1 = (x) => Math.round(x * 10) / 10;
const ratioOf = (plain, withFeatures) => Math.round((withFeatures.seconds / plain.seconds) * 100) / 100;

function portOpen(port) {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/** KAFKA_BROKERS, or the local broker of deploy/kafka (started when nothing listens on 9092). */
async function kafkaBrokers() {
  if (process.env.KAFKA_BROKERS) return process.env.KAFKA_BROKERS;
  if (!(await portOpen(9092))) execFileSync('bash', [path.join(ROOT, 'deploy', 'kafka', 'kafka.sh'), 'start'], { stdio: 'inherit' });
  return '127.0.0.1:9092';
}

/** The five services on database `dbName` (created when `create`); `billingReadyAt` is when billing's /readyz first answered. */
async function startStack(brokers, profileDir, dbName, create, billingEnv = {}) {
  if (create) await admin(`CREATE DATABASE "${dbName}"`);
  const dbUrl = new URL(ADMIN_URL);
  dbUrl.pathname = `/${dbName}`;
  const key = `bsk_bench_${randomBytes(18).toString('base64url')}`;
  const names = ['customer', 'wallet', 'ingestion-aggregator', 'billing', 'gateway'];
  const ports = {};
  for (const n of names) ports[n] = await freePort();
  const url = (n) => `http://127.0.0.1:${ports[n]}`;
  const common = commonServiceEnv({ dbUrl, dbName, brokers });
  const env = {
    customer: {},
    wallet: { CUSTOMER_SERVICE_URL: url('customer'), WALLET_EXPIRY_INTERVAL_MS: '0' },
    'ingestion-aggregator': {},
    billing: {
      CUSTOMER_SERVICE_URL: url('customer'),
      INGESTION_SERVICE_URL: url('ingestion-aggregator'),
      WALLET_SERVICE_URL: url('wallet'),
      BILLING_INTERVAL_MS: '1000',
      SUBSCRIPTION_RENEWAL_NOTICE_DAYS: '0',
      ...(process.env.BILLING_JOB_CONCURRENCY ? { BILLING_JOB_CONCURRENCY: process.env.BILLING_JOB_CONCURRENCY } : {}),
      ...billingEnv,
    },
    // The entitlements service is not part of this stack (nothing here calls it).
    gateway: { ...gatewayEnv(url, key, TENANT, ENV), ENTITLEMENTS_SERVICE_URL: 'http://127.0.0.1:9' },
  };
  let billingReadyAt = 0;
  // Postgres' statements from the stack's start: the close starts with billing's first job run.
  const pgStatements = await statements(ADMIN_URL);
  await pgStatements.reset();
  const procs = await launchAll(
    names,
    (n) => ({ ...common, ...env[n], PORT: String(ports[n]) }),
    url,
    (n) => (PROFILE === n ? profileDir : undefined),
    (n) => {
      if (n === 'billing') billingReadyAt = Date.now();
    },
  );
  return {
    url: url('gateway'),
    databaseUrl: dbUrl.toString(),
    pids: Object.fromEntries(names.map((n, i) => [n, procs[i].child.pid])),
    output: Object.fromEntries(names.map((n, i) => [n, procs[i].output])),
    key,
    billingReadyAt,
    dbName,
    statements: pgStatements,
    stop: async (keepDb = false) => {
      for (const proc of [...procs].reverse()) await stopProcess(proc);
      if (!keepDb && !process.env.KEEP_DB) await admin(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
    },
  };
}

/** tokens of event j (deterministic, so the expected sums are known here). */
const tokensOf = (j) => (j % 50) + 1;

async function setUp(stack, api, pg) {
  const t0 = performance.now();
  const calls = (await api.must('POST', '/v1/meters', { name: 'calls', event_name: 'api_call', aggregation: { type: 'COUNT' } }, 201)).id;
  const tokens = (await api.must('POST', '/v1/meters', { name: 'tokens', event_name: 'api_call', aggregation: { type: 'SUM', field: 'tokens' } }, 201)).id;
  const daily = { currency: 'usd', billing_model: 'FLAT_FEE', billing_period: 'DAILY' };
  const prices = [
    { ...daily, type: 'FIXED', amount: '10', invoice_cadence: 'ARREAR' },
    { ...daily, type: 'USAGE', amount: '0.01', invoice_cadence: 'ARREAR', meter_id: calls },
    { ...daily, type: 'USAGE', amount: '0.001', invoice_cadence: 'ARREAR', meter_id: tokens },
  ];
  const plan = await api.must('POST', '/v1/plans', { name: 'Bench', prices }, 201);
  const customers = new Array(SUBSCRIPTIONS);
  await inParallel(SUBSCRIPTIONS, 32, async (i) => {
    const c = await api.must('POST', '/v1/customers', { external_customer_id: `bc-${i}` }, 201);
    customers[i] = c.id;
    if (i % 2 === 0) await api.must('POST', '/v1/wallets', { customer_id: c.id, currency: 'usd', initial_credits_to_load: String(WALLET_CREDITS) }, 201);
  });
  await settleSetup(pg, SUBSCRIPTIONS, 'customers');
  const customersS = (performance.now() - t0) / 1000;

  // The period ends when the rest of the set-up (events, subscriptions: about as long as the
  // customers took, on a loaded machine) is surely done: MARGIN_S at least.
  // With the feature set, an hour: its subscriptions and grants come after the events, and on a
  // loaded machine the set-up overran 2.5 times the customers' time. The runs move the periods
  // back (endPeriodNow), so a late period end costs nothing.
  const periodEnd = Date.now() + Math.max(MARGIN_S, FEATURES ? 3600 : Math.round(1.5 * customersS + 120)) * 1000;
  const periodStart = periodEnd - DAY_MS;
  // Events: event j belongs to customer j % SUBSCRIPTIONS, timestamps spread over the period so far.
  const sentUntil = Date.now() - 1000;
  const span = sentUntil - periodStart;
  const expected = Array.from({ length: SUBSCRIPTIONS }, () => ({ calls: 0, tokens: 0 }));
  const bulks = Math.ceil(EVENTS / 1000);
  const prefix = randomBytes(4).toString('hex');
  await inParallel(bulks, 6, async (b) => {
    const parts = [];
    for (let j = b * 1000; j < Math.min(EVENTS, (b + 1) * 1000); j += 1) {
      const c = j % SUBSCRIPTIONS;
      expected[c].calls += 1;
      expected[c].tokens += tokensOf(j);
      const ts = new Date(periodStart + Math.floor((j / EVENTS) * span)).toISOString();
      parts.push(`{"event_id":"${prefix}-${j}","event_name":"api_call","external_customer_id":"bc-${c}","timestamp":"${ts}","properties":{"tokens":${tokensOf(j)}}}`);
    }
    const res = await api.call('POST', '/v1/events/bulk', `{"events":[${parts.join(',')}]}`);
    if (res.status !== 202) throw new Error(`bulk: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
  });
  for (;;) {
    const { rows } = await pg.query('SELECT coalesce(sum(total_events), 0)::bigint AS n FROM ingestion.event_stats');
    if (Number(rows[0].n) >= EVENTS) break;
    await sleep(250);
  }
  const eventsS = (performance.now() - t0) / 1000 - customersS;
  const subscriptions = new Array(SUBSCRIPTIONS);
  await inParallel(SUBSCRIPTIONS, 32, async (i) => {
    const s = await api.must('POST', '/v1/subscriptions', { customer_id: customers[i], plan_id: plan.id, start_date: new Date(periodStart).toISOString(), payment_terms_days: 30 }, 201);
    subscriptions[i] = s.id;
    if (Date.parse(s.current_period_end) !== periodEnd) throw new Error(`subscription period ends ${s.current_period_end}, not ${new Date(periodStart).toISOString()} + 1 day`);
  });
  const subscriptionsS = (performance.now() - t0) / 1000 - customersS - eventsS;
  const withFeatures = FEATURES ? await features.setUpFeatures(api, { customers, prices, periodStart, periodEnd, inParallel }) : undefined;
  const featuresS = (performance.now() - t0) / 1000 - customersS - eventsS - subscriptionsS;

  await settleSetup(pg, SUBSCRIPTIONS, 'subscriptions and events');
  await analyzeAsAutovacuum(pg);
  if (Date.now() >= periodEnd) throw new Error(`set-up ended ${Math.round((Date.now() - periodEnd) / 1000)} s after the period's end: raise MARGIN_S`);
  const { rows: early } = await pg.query("SELECT count(*)::int AS n FROM billing.invoices WHERE billing_reason = 'SUBSCRIPTION_CYCLE'");
  if (early[0].n !== 0) throw new Error('cycle invoices exist before the period ended');
  return {
    customers,
    subscriptions,
    planId: plan.id,
    features: withFeatures,
    expected,
    periodEnd,
    setup_s: {
      customers_and_wallets: Math.round(customersS),
      subscriptions: Math.round(subscriptionsS),
      events: Math.round(eventsS),
      ...(withFeatures ? { feature_subscriptions_and_grants: Math.round(featuresS) } : {}),
      idle_until_period_end: Math.round((periodEnd - Date.now()) / 1000),
    },
  };
}

/** Expected subtotal in cents: $10 + 1 cent a call + 0.1 cent a token (rounded half up once). */
const subtotalOf = (e) => 1000 + e.calls + Math.round(e.tokens / 10);

/**
 * Times one close on a stack started after the period ended: from billing's readiness (its
 * schedule runs the job 1 s after start, every due subscription already due) until every cycle
 * invoice is finalized (`withFeatures`: and every grant is credited for the new period).
 */
async function close(stack, pg, setup, kind = 'close', taxRateId = undefined) {
  const withFeatures = kind === 'close-features';
  const cpuPids = { ...stack.pids, client: process.pid };
  const checkpoints = async () => (await pg.query('SELECT (checkpoints_timed + checkpoints_req)::int AS n FROM pg_stat_bgwriter')).rows[0].n;
  const checkpointsBefore = await checkpoints();
  const before = cpuSeconds(cpuPids);
  const t0 = stack.billingReadyAt;
  let finalized = 0;
  let allFinalizedS;
  const series = [];
  // Progress from billing's invoice_counts (kept by triggers, a few rows) less the seeded
  // invoices: a count of the invoices themselves every 250 ms was Postgres work the bench added
  // to what it measures (0.08-0.14 ms per invoice with one earlier period in the table).
  const counts = async () => {
    const { rows } = await pg.query(
      `SELECT coalesce(sum(n), 0)::int AS made, coalesce(sum(n) FILTER (WHERE status IN ('finalized', 'paid')), 0)::int AS finalized FROM billing.invoice_counts`,
    );
    return rows[0];
  };
  // The seeded invoices (earlier periods) are the baseline, whenever the first of the close's is made.
  const { rows: seeded } = await pg.query(
    `SELECT count(*)::int AS made, (count(*) FILTER (WHERE status IN ('finalized', 'paid')))::int AS finalized FROM billing.invoices WHERE NOT (${REAL_INVOICES})`,
  );
  const before0 = seeded[0];
  for (;;) {
    const now = await counts();
    const made = now.made - before0.made;
    finalized = now.finalized - before0.finalized;
    const t = (Date.now() - t0) / 1000;
    if (series.length === 0 || t - series[series.length - 1].t >= 5) series.push({ t: Math.round(t), made, finalized });
    if (finalized >= SUBSCRIPTIONS && allFinalizedS === undefined) allFinalizedS = round1(t);
    if (finalized >= SUBSCRIPTIONS && (!withFeatures || (await features.grantsDone(pg, setup)))) break;
    if (t > 1800) throw new Error(`only ${finalized} invoices finalized after 1800 s`);
    await sleep(250);
  }
  const seconds = (Date.now() - t0) / 1000;
  const after = cpuSeconds(cpuPids);
  const checkpointsDuring = (await checkpoints()) - checkpointsBefore;
  const cores = coresBusy(before, after, seconds);
  const msPerInvoice = Object.fromEntries(Object.keys(after).map((k) => [k, ((after[k] - (before[k] || 0)) * 1000) / SUBSCRIPTIONS]));
  const cpuMsPerInvoice = Object.fromEntries(Object.entries(msPerInvoice).map(([k, v]) => [k, round1(v)]));
  const sum = (keys) => Math.round(keys.reduce((a, k) => a + (msPerInvoice[k] || 0), 0) * 100) / 100;
  const nodeKeys = Object.keys(msPerInvoice).filter((k) => k !== 'postgres' && k !== 'kafka' && k !== 'client');
  const { rows: firstRows } = await pg.query(
    `SELECT min(created_at) AS first_made, max(created_at) AS last_made, max(finalized_at) AS last_finalized FROM billing.invoices WHERE billing_reason = 'SUBSCRIPTION_CYCLE' AND ${REAL_INVOICES}`,
  );
  const check = withFeatures
    ? await features.verifyFeatures(pg, setup, { subtotalOf, walletCents: WALLET_CREDITS * 100 })
    : kind === 'close-taxes'
      ? await taxes.verifyTaxes(pg, setup, { subtotalOf, walletCents: WALLET_CREDITS * 100, rateId: taxRateId, subscriptions: SUBSCRIPTIONS })
      : await verify(pg, setup);
  return {
    scenario: kind,
    invoices: SUBSCRIPTIONS,
    events: EVENTS,
    seconds: Number(seconds.toFixed(1)),
    invoices_per_s: Math.round(SUBSCRIPTIONS / seconds),
    job_first_invoice_after_s: Number(((firstRows[0].first_made.getTime() - t0) / 1000).toFixed(1)),
    all_made_after_s: Number(((firstRows[0].last_made.getTime() - t0) / 1000).toFixed(1)),
    all_finalized_after_s: allFinalizedS,
    cores_busy: cores,
    cpu_ms_per_invoice: cpuMsPerInvoice,
    // Unrounded sums, for the ratios to the run's ceilings (the services' node processes; the bench client apart).
    cpu_ms_per_invoice_sums: { total: sum(Object.keys(msPerInvoice).filter((k) => k !== 'client')), postgres: sum(['postgres']), services: sum(nodeKeys), kafka: sum(['kafka']) },
    postgres_statements: await stack.statements.top(stack.dbName, SUBSCRIPTIONS),
    // Checkpoints that started during the close (each adds its writes and full-page images).
    checkpoints_during: checkpointsDuring,
    load_1m_at_end: Number(os.loadavg()[0].toFixed(1)),
    series,
    check,
  };
}

/** Correctness at the end of a close: counts, statuses, numbers, lines, sums, credits, debits. */
async function verify(pg, setup) {
  const index = new Map(setup.customers.map((c, i) => [c, i]));
  const { rows } = await pg.query(
    `SELECT i.id, i.customer_id, i.status, i.invoice_number, i.subtotal, i.total_prepaid_credits_applied AS applied, i.amount_due,
            (SELECT count(*)::int FROM billing.invoice_line_items l WHERE l.invoice_id = i.id) AS lines
     FROM billing.invoices i WHERE billing_reason = 'SUBSCRIPTION_CYCLE' AND ${REAL_INVOICES}`,
  );
  const problems = [];
  const numbers = new Set();
  let credited = 0;
  let appliedSum = 0;
  let subtotalSum = 0;
  let expectedSubtotalSum = 0;
  for (const r of rows) {
    const i = index.get(r.customer_id);
    const e = setup.expected[i];
    const want = subtotalOf(e);
    subtotalSum += Number(r.subtotal);
    expectedSubtotalSum += want;
    if (!['finalized', 'paid'].includes(r.status)) problems.push(`${r.id} ${r.status}`);
    if (r.lines !== 3) problems.push(`${r.id} has ${r.lines} lines`);
    if (Number(r.subtotal) !== want) problems.push(`${r.id} subtotal ${r.subtotal}, expected ${want}`);
    // The wallet's default allowed_price_types is USAGE: it pays the usage lines, up to its balance.
    const wantApplied = Math.min(features.plainWalletCents(setup, i, WALLET_CREDITS * 100), want - 1000);
    if (Number(r.applied) !== wantApplied) problems.push(`${r.id} credits applied ${r.applied}, expected ${wantApplied}`);
    if (Number(r.amount_due) !== want - wantApplied) problems.push(`${r.id} amount_due ${r.amount_due}`);
    if (Number(r.applied) > 0) credited += 1;
    appliedSum += Number(r.applied);
    numbers.add(Number(String(r.invoice_number).split('-')[2]));
  }
  if (rows.length !== SUBSCRIPTIONS) problems.push(`${rows.length} cycle invoices, expected ${SUBSCRIPTIONS}`);
  const gapFree = numbers.size === rows.length && Math.min(...numbers) === 1 && Math.max(...numbers) === rows.length;
  if (!gapFree) problems.push('invoice numbers are not 1..n');
  const { rows: debits } = await pg.query(
    "SELECT count(*)::int AS n, coalesce(sum(credit_amount), 0)::numeric AS credits FROM wallet.transactions WHERE transaction_reason = 'INVOICE_CREDIT_APPLIED'",
  );
  if (debits[0].n !== SUBSCRIPTIONS / 2) problems.push(`${debits[0].n} INVOICE_CREDIT_APPLIED debits, expected ${SUBSCRIPTIONS / 2}`);
  return {
    cycle_invoices: rows.length,
    finalized: rows.filter((r) => ['finalized', 'paid'].includes(r.status)).length,
    numbers_gap_free: gapFree,
    credited_invoices: credited,
    credits_applied_cents: appliedSum,
    subtotal_sum_cents: subtotalSum,
    expected_subtotal_sum_cents: expectedSubtotalSum,
    wallet_debits: debits[0].n,
    wallet_credits_debited: String(debits[0].credits),
    ok: problems.length === 0,
    problems: problems.slice(0, 10),
  };
}

/**
 * The machines' Postgres runs with autovacuum off (its conf.d/90-ci.conf): the statistics a
 * production server's autovacuum would have gathered by now, once (the run copies keep them).
 * As autovacuum does, only the tables changed in more than 50 rows + 10 % since their last
 * analyze. A table never written keeps no statistics (reltuples -1), as on a real server:
 * analyzed empty, a table the close then fills (invoices) looks a few pages long to the plans
 * cached early (the foreign-key checks of the line inserts), which then scan it whole for
 * every line for the rest of the connection; never analyzed, the planner assumes 10 pages at
 * least and those plans use the index.
 */
async function analyzeAsAutovacuum(pg) {
  // Other backends flush their table counters within a second of going idle.
  await sleep(1500);
  const { rows } = await pg.query(
    `SELECT format('%I.%I', schemaname, relname) AS t FROM pg_stat_user_tables WHERE n_mod_since_analyze > 50 + 0.1 * greatest(n_live_tup, 0)`,
  );
  for (const r of rows) await pg.query(`ANALYZE ${r.t}`);
}

/**
 * Seeds past-period invoices directly in the billing schema up to LIST_INVOICES in all: each
 * subscription gets earlier daily periods (invoices of the same shape as the job's: 3 lines),
 * statuses mixed.
 */
async function seedInvoices(pg, setup) {
  const { rows } = await pg.query('SELECT count(*)::int AS n FROM billing.invoices');
  const missing = LIST_INVOICES - rows[0].n;
  if (missing <= 0) return 0;
  const started = performance.now();
  // The lines of a real cycle invoice of the close are the template of every seeded invoice's.
  const template = `SELECT l.position, l.price_id, l.price_type, l.meter_id, l.description
       FROM billing.invoice_line_items l WHERE l.invoice_id = (SELECT id FROM billing.invoices WHERE billing_reason = 'SUBSCRIPTION_CYCLE' AND ${REAL_INVOICES} LIMIT 1)`;
  await insertPastInvoices(pg, setup, { count: missing, perSub: Math.ceil(missing / SUBSCRIPTIONS), firstDay: HISTORY_DAYS + 1, idPrefix: 'inv_seed', mixed: true, template });
  await pg.query('ANALYZE billing.invoices');
  await pg.query('ANALYZE billing.invoice_line_items');
  await pg.query('VACUUM billing.invoices');
  return { seeded: missing, seconds: Number(((performance.now() - started) / 1000).toFixed(1)) };
}

/**
 * A close runs on a database that already holds earlier periods, as every close but a new
 * deployment's first does: HISTORY_DAYS (default 1) earlier daily periods of every
 * subscription, invoiced and paid (3 lines each, ids `inv_hist...`, numbers `SEED-...`, left out
 * of every check), written once into the set-up, then analyzed as autovacuum would have.
 * HISTORY_DAYS=0 closes on empty invoice tables (the first close of a new deployment).
 */
async function ensureHistory(dbName, setup) {
  if (HISTORY_DAYS === 0) return undefined;
  const url = new URL(ADMIN_URL);
  url.pathname = `/${dbName}`;
  const pg = new Client({ connectionString: url.toString() });
  await pg.connect();
  try {
    const { rows } = await pg.query("SELECT count(*)::int AS n FROM billing.invoices WHERE id LIKE 'inv_hist%'");
    const count = HISTORY_DAYS * SUBSCRIPTIONS;
    if (rows[0].n === count) return count;
    if (rows[0].n !== 0) throw new Error(`set-up ${dbName} holds ${rows[0].n} earlier invoices, not ${count}: make a new set-up for HISTORY_DAYS=${HISTORY_DAYS}`);
    // The plan's prices in their order on the invoice (the FIXED price first, as created).
    const template = `SELECT (row_number() OVER (ORDER BY p.created_at, p.id) - 1)::int AS position, p.id AS price_id, p.type AS price_type, p.meter_id,
         'Earlier period' AS description FROM billing.prices p WHERE p.plan_id = '${setup.planId}' AND p.subscription_id IS NULL`;
    await insertPastInvoices(pg, setup, { count, perSub: HISTORY_DAYS, firstDay: 1, idPrefix: 'inv_hist', mixed: false, template });
    await analyzeAsAutovacuum(pg);
    return count;
  } finally {
    await pg.end();
  }
}

/**
 * Writes `count` earlier daily invoices of the plan's subscriptions, `perSub` each at most (the
 * periods `firstDay` to `firstDay + perSub - 1` days before the current one), with
 * 3 lines from `template` (a query of position, price_id, price_type, meter_id, description):
 * statuses mixed (60 % paid, 30 % finalized, 5 % draft, 5 % voided) or all paid.
 */
async function insertPastInvoices(pg, setup, { count, perSub, firstDay, idPrefix, mixed, template }) {
  await pg.query('BEGIN');
  await pg.query(
    `CREATE TEMP TABLE seed ON COMMIT DROP AS
     SELECT '${idPrefix}' || lpad(row_number() OVER ()::text, 18, '0') AS id, s.tenant_id, s.environment_id, s.customer_id, s.id AS subscription_id,
            s.current_period_start - (k + 1) * interval '1 day' AS period_start, s.current_period_start - k * interval '1 day' AS period_end,
            1000 + (abs(hashtext(s.id || k)) % 2000) AS subtotal, ${mixed ? "abs(hashtext(s.id || k || 'st')) % 100" : '0'} AS r
     FROM billing.subscriptions s CROSS JOIN generate_series($4::int, $4::int + $1::int - 1) k
     WHERE s.plan_id = $3
     LIMIT $2`,
    [perSub, count, setup.planId, firstDay],
  );
  await pg.query(
    `INSERT INTO billing.invoices (id, tenant_id, environment_id, customer_id, subscription_id, billing_reason, status, payment_status, currency,
       period_start, period_end, payment_terms_days, due_date, subtotal, total_prepaid_credits_applied, total, amount_due, amount_paid, amount_remaining,
       invoice_number, finalize_after, finalized_at, voided_at, refund_state, created_at, updated_at)
     SELECT id, tenant_id, environment_id, customer_id, subscription_id, 'SUBSCRIPTION_CYCLE',
       CASE WHEN r < 60 THEN 'paid' WHEN r < 90 THEN 'finalized' WHEN r < 95 THEN 'draft' ELSE 'voided' END,
       CASE WHEN r < 60 THEN 'succeeded' ELSE 'pending' END, 'usd', period_start, period_end, 30,
       CASE WHEN r < 95 AND r >= 90 THEN NULL ELSE period_end + interval '30 days' END,
       subtotal, 0, subtotal, subtotal, CASE WHEN r < 60 THEN subtotal ELSE 0 END, CASE WHEN r < 60 THEN 0 ELSE subtotal END,
       CASE WHEN r >= 90 AND r < 95 THEN NULL ELSE 'SEED-' || id END,
       -- drafts wait for a finalize delay (the period job must not finalize them during the measure)
       now() + interval '1 day', CASE WHEN r >= 90 AND r < 95 THEN NULL ELSE period_end END, CASE WHEN r >= 95 THEN period_end END,
       CASE WHEN r >= 95 THEN 'done' END, period_end, period_end
     FROM seed`,
  );
  await pg.query(
    `INSERT INTO billing.invoice_line_items (id, invoice_id, position, price_id, price_type, meter_id, description, quantity, unit_amount, amount, net_amount, period_start, period_end)
     SELECT 'invli_' || substr(s.id, 5) || '_' || p.position, s.id, p.position, p.price_id, p.price_type, p.meter_id, p.description,
       CASE p.position WHEN 0 THEN '1' ELSE ((s.subtotal - 1000) / 2)::text END,
       CASE p.position WHEN 0 THEN '10' WHEN 1 THEN '0.01' ELSE '0.001' END,
       CASE p.position WHEN 0 THEN 1000 WHEN 1 THEN (s.subtotal - 1000) / 2 ELSE s.subtotal - 1000 - (s.subtotal - 1000) / 2 END,
       -- net_amount = amount: no offset or discount on a seeded line (the invoice arithmetic's check, ADR 0038)
       CASE p.position WHEN 0 THEN 1000 WHEN 1 THEN (s.subtotal - 1000) / 2 ELSE s.subtotal - 1000 - (s.subtotal - 1000) / 2 END,
       s.period_start, s.period_end
     FROM seed s CROSS JOIN LATERAL (${template}) p`,
  );
  await pg.query('COMMIT');
}

async function list(stack, api, pg, setup) {
  const seeded = await seedInvoices(pg, setup);
  const { rows: total } = await pg.query('SELECT count(*)::int AS n FROM billing.invoices');
  const { rows: sample } = await pg.query('SELECT DISTINCT customer_id FROM billing.invoices ORDER BY 1 LIMIT 200');
  const customers = sample.map((r) => r.customer_id);
  const cases = [
    { name: 'no filter', query: () => '' },
    { name: 'customer_id', query: (i) => `?customer_id=${customers[i % customers.length]}` },
    { name: 'status=finalized', query: () => '?status=finalized' },
    { name: 'status=draft', query: () => '?status=draft' },
    { name: 'customer_id+status=paid', query: (i) => `?customer_id=${customers[i % customers.length]}&status=paid` },
  ];
  const results = [];
  for (const c of cases) {
    for (let i = 0; i < 30; i += 1) await api.must('GET', `/v1/invoices${c.query(i)}`, undefined, 200);
    const ms = [];
    let items = 0;
    let totalCount = 0;
    for (let i = 0; i < LIST_REQUESTS; i += 1) {
      const t = performance.now();
      const body = await api.must('GET', `/v1/invoices${c.query(i)}`, undefined, 200);
      ms.push(performance.now() - t);
      items = body.items.length;
      totalCount = body.pagination.total;
    }
    ms.sort((a, b) => a - b);
    const r = { case: c.name, requests: LIST_REQUESTS, items_per_page: items, total: totalCount, p50: percentile(ms, 50), p95: percentile(ms, 95), p99: percentile(ms, 99) };
    results.push(r);
    console.log(JSON.stringify(r));
  }
  return { invoices: total[0].n, seeded, results };
}


const ceilingsOf = (r) =>
  r.ceilings
    ? `${r.ceilings.raw_insert.rows_per_s.toLocaleString('en')} rows/s, Postgres ${r.ceilings.raw_insert.postgres_cpu_us_per_row} µs a row; ${r.ceilings.proxied_floor.cpu_us_per_request.server + r.ceilings.proxied_floor.cpu_us_per_request.proxy} µs a request`
    : '-';
const inCeilings = (r) =>
  r.vs_ceilings ? `Postgres ${r.vs_ceilings.postgres_in_raw_rows} raw rows; services ${r.vs_ceilings.services_in_floor_requests} floor requests; all ${r.vs_ceilings.total_in_floor_requests}` : '-';

function writeReadme(meta, closes, featureCloses, taxCloses, lists, setupS) {
  const lines = [`<!-- RESULTS:START -->`, `Run ${meta.date} on ${meta.cpus} cores (${meta.cpuModel}), load average at start ${meta.load}; Kafka ${meta.brokers}; ${closes.length} runs, each on fresh processes and its own copy of one set-up (set-up, not timed: ${JSON.stringify(setupS)} s).`, ''];
  if (closes.length > 0) {
    const worst = closes.reduce((a, b) => (b.seconds > a.seconds ? b : a));
    lines.push(
      `**Closing a period** (${SUBSCRIPTIONS.toLocaleString('en')} subscriptions, ${EVENTS.toLocaleString('en')} events, half with a PRE_PAID wallet): worst **${worst.seconds} s** (${worst.invoices_per_s} invoices/s); goal < 60 s: ${worst.seconds < 60 ? 'met' : 'MISSED'}.`,
      '',
      '| run | job start -> all finalized | invoices/s | first invoice after | all made after | cores busy | CPU ms per invoice | ceilings of the run: raw insert; proxied floor | the invoice\'s CPU in ceilings | load (1 min) at end | checks |',
      '|---|---|---|---|---|---|---|---|---|---|---|',
      ...closes.map(
        (r, i) =>
          `| ${i + 1} | ${r.seconds} s | ${r.invoices_per_s} | ${r.job_first_invoice_after_s} s | ${r.all_made_after_s} s | ${features.perProcess(r.cores_busy)} | ${features.perProcess(r.cpu_ms_per_invoice)}: **${r.cpu_ms_per_invoice_sums.total}** | ${ceilingsOf(r)} | ${inCeilings(r)} | ${r.load_1m_at_end} | ${r.check.ok ? `ok: ${r.check.cycle_invoices} finalized, numbers 1..n, ${r.check.credited_invoices} credited (${r.check.credits_applied_cents} cents), subtotals = expected (${r.check.subtotal_sum_cents})` : `FAILED ${r.check.problems.join('; ')}`} |`,
      ),
      '',
    );
  }
  if (featureCloses.length > 0) lines.push(...features.report(closes, featureCloses, { subscriptions: SUBSCRIPTIONS, events: EVENTS }), '');
  if (taxCloses.length > 0) lines.push(...taxes.report(closes, taxCloses, { subscriptions: SUBSCRIPTIONS, events: EVENTS, ceilingsOf, inCeilings }), '');
  if (lists.length > 0) {
    const names = lists[0].results.map((r) => r.case);
    lines.push(
      `**GET /v1/invoices** at ${lists[0].invoices.toLocaleString('en')} invoices of one tenant, ${LIST_REQUESTS} requests per case one at a time through the gateway (default limit 50); worst of the runs:`,
      '',
      '| case | total | p50 | p95 | p99 | p95 goal < 50 ms |',
      '|---|---|---|---|---|---|',
      ...names.map((name) => {
        const rs = lists.map((l) => l.results.find((r) => r.case === name));
        const worst = (k) => Math.max(...rs.map((r) => r[k]));
        return `| ${name} | ${rs[0].total} | ${round1(worst('p50'))} ms | ${round1(worst('p95'))} ms | ${round1(worst('p99'))} ms | ${worst('p95') < 50 ? 'met' : 'MISSED'} |`;
      }),
      '',
    );
  }
  lines.push('<!-- RESULTS:END -->');
  const block = lines.join('\n');
  const current = fs.existsSync(README) ? fs.readFileSync(README, 'utf8') : '';
  fs.writeFileSync(
    README,
    current.includes('<!-- RESULTS:START -->') ? current.replace(/<!-- RESULTS:START -->[\s\S]*<!-- RESULTS:END -->/, block) : `${current}\n${block}\n`,
  );
}

/**
 * The ceilings of bench/limits, just before a close (nothing else running): the raw insert (its
 * Postgres CPU per row) and the proxied floor at 500 requests/s for 10 s (its CPU per request).
 */
async function measureCeilings() {
  const raw = await rawInsert();
  const floor = await proxiedFloor({ rate: 500, seconds: 10 });
  return { raw_insert: raw, proxied_floor: floor };
}

/**
 * A close's CPU per invoice in the units of its run's ceilings, which move with the machine's
 * hour as the close does: Postgres' as raw-inserted rows (its CPU per invoice over the raw
 * insert's per row), the services' and the whole as floor requests (over the proxied floor's
 * server + proxy CPU per request).
 */
function againstCeilings(r, ceilings) {
  const rowUs = ceilings.raw_insert.postgres_cpu_us_per_row;
  const floorUs = ceilings.proxied_floor.cpu_us_per_request.server + ceilings.proxied_floor.cpu_us_per_request.proxy;
  const sums = r.cpu_ms_per_invoice_sums;
  return {
    postgres_in_raw_rows: Math.round((sums.postgres * 1000) / rowUs),
    services_in_floor_requests: round1((sums.services * 1000) / floorUs),
    total_in_floor_requests: round1((sums.total * 1000) / floorUs),
  };
}

/**
 * Moves a copy's subscriptions back in time so that their period ended a second ago (start
 * date, anchor and period shifted by the same amount): a run need not wait for the set-up's
 * period end, and every event sent stays inside the period (they were all sent before now).
 */
async function endPeriodNow(dbName, setup, duePlanId) {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${dbName}`;
  const pg = new Client({ connectionString: url.toString() });
  await pg.connect();
  try {
    // With the feature set: only `duePlanId`'s set ends now, the other a day later (features.js).
    if (setup.features) return await features.shiftSets(pg, setup.periodEnd, duePlanId);
    const shiftMs = Math.max(0, setup.periodEnd - (Date.now() - 1000));
    await pg.query(
      `UPDATE billing.subscriptions SET start_date = start_date - $1 * interval '1 millisecond', billing_anchor = billing_anchor - $1 * interval '1 millisecond',
         current_period_start = current_period_start - $1 * interval '1 millisecond', current_period_end = current_period_end - $1 * interval '1 millisecond'`,
      [shiftMs],
    );
    await pg.query('VACUUM ANALYZE billing.subscriptions');
  } finally {
    await pg.end();
  }
}

async function main() {
  const brokers = await kafkaBrokers();
  const meta = {
    date: new Date().toISOString(),
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    load: os.loadavg().map((l) => l.toFixed(1)).join(' '),
    brokers,
  };
  console.log(JSON.stringify(meta));
  // One set-up (minutes on this machine), copied for every run: each run starts fresh
  // processes on its own copy, after the period ended. SETUP_DB=<name> reuses a set-up kept
  // by an earlier invocation with KEEP_SETUP=1 (its facts are in <tmpdir>/<name>.json).
  let base = process.env.SETUP_DB;
  let setup;
  if (base) {
    setup = JSON.parse(fs.readFileSync(path.join(os.tmpdir(), `${base}.json`), 'utf8'));
  } else {
    base = `bench_billing_${Date.now().toString(36)}`;
    const stack = await startStack(brokers, '', base, true);
    const api = apiClient(stack.url, stack.key);
    const pg = new Client({ connectionString: stack.databaseUrl });
    await pg.connect();
    try {
      setup = await setUp(stack, api, pg);
    } catch (err) {
      console.error('billing output:', stack.output.billing().slice(-5000));
      throw err;
    } finally {
      await pg.end();
      await api.pool.close();
      await stack.stop(true);
    }
    fs.writeFileSync(path.join(os.tmpdir(), `${base}.json`), JSON.stringify(setup));
  }
  const history = await ensureHistory(base, setup);
  console.log(JSON.stringify({ setup_db: base, setup: setup.setup_s, history_invoices: history ?? 0 }));
  if (FEATURES && !setup.features) throw new Error(`set-up ${base} has no feature set: make one with SCENARIOS including close-features`);
  const stamp = Date.now().toString(36);
  const closes = [];
  const featureCloses = [];
  const taxCloses = [];
  const lists = [];
  try {
    for (let run = 1; run <= RUNS; run += 1) {
      // Each set on its own copy and fresh processes; the order alternates between runs.
      const kinds = [...(SCENARIOS.includes('close') || SCENARIOS.includes('list') ? ['close'] : []), ...(FEATURES ? ['close-features'] : []), ...(TAXES ? ['close-taxes'] : [])];
      if (run % 2 === 0) kinds.reverse();
      for (const [order, kind] of kinds.entries()) {
        const withFeatures = kind === 'close-features';
        const profileDir = PROFILE ? fs.mkdtempSync(path.join(os.tmpdir(), 'billstream-prof-')) : '';
        const runDb = `${base}_${stamp}_${run}${withFeatures ? 'f' : kind === 'close-taxes' ? 't' : ''}`;
        await admin(`CREATE DATABASE "${runDb}" TEMPLATE "${base}"`);
        await endPeriodNow(runDb, setup, withFeatures ? setup.features.planId : setup.planId);
        // With close-taxes, every close's copy first gets a stack of its own with the period job
        // off (BILLING_INTERVAL_MS=0), stopped before the timed one: the taxed copy gets its tax
        // settings, rate and plan rates through the gateway there (taxes.js), the plain copy the
        // same start and stop with nothing changed.
        const taxRateId = TAXES && kind !== 'close-features' ? await prepareCopy(brokers, runDb, setup, kind === 'close-taxes') : undefined;
        const ceilings = CEILING ? await measureCeilings() : undefined;
        // Every close starts just after a checkpoint: the copy's 0.5 GB of WAL and the ceilings'
        // rows would otherwise bring one (max_wal_size) at a different moment of each close, and
        // with it the checkpoint's writes and the full-page images of the pages touched next.
        await admin('CHECKPOINT');
        const runStack = await startStack(brokers, profileDir, runDb, false);
        const runApi = apiClient(runStack.url, runStack.key);
        const runPg = new Client({ connectionString: runStack.databaseUrl });
        await runPg.connect();
        try {
          const r = await close(runStack, runPg, setup, kind, taxRateId);
          if (ceilings) Object.assign(r, { ceilings, vs_ceilings: againstCeilings(r, ceilings) });
          r.order = `${order + 1} of ${kinds.length}`;
          (withFeatures ? featureCloses : kind === 'close-taxes' ? taxCloses : closes).push(r);
          console.log(JSON.stringify({ run, close: r }, null, 2));
          if (!withFeatures && SCENARIOS.includes('list')) {
            const l = await list(runStack, runApi, runPg, setup);
            lists.push(l);
            console.log(JSON.stringify({ run, list: { invoices: l.invoices, seeded: l.seeded } }));
          }
        } catch (err) {
          console.error('billing output:', runStack.output.billing().slice(-5000));
          throw err;
        } finally {
          await runPg.end();
          await runApi.pool.close();
          await runStack.stop();
          if (PROFILE) console.log(JSON.stringify({ run, kind, profile: summarizeProfile(profileDir) }, null, 2));
        }
      }
      if (closes[run - 1] && featureCloses[run - 1]) console.log(JSON.stringify({ run, features_over_plain: ratioOf(closes[run - 1], featureCloses[run - 1]) }));
      if (closes[run - 1] && taxCloses[run - 1]) {
        const [p, t] = [closes[run - 1], taxCloses[run - 1]];
        console.log(JSON.stringify({ run, taxed_over_plain_cpu_per_invoice: taxes.cpuRatio(p, t), in_ceilings: taxes.ceilingRatio(p, t), seconds: [p.seconds, t.seconds], taxed_check_ok: t.check.ok }));
      }
    }
  } finally {
    if (!process.env.KEEP_SETUP && !process.env.SETUP_DB) await admin(`DROP DATABASE IF EXISTS "${base}" WITH (FORCE)`);
  }
  if (closes.length > 0 && featureCloses.length > 0) {
    console.log(JSON.stringify({ worst_features_over_plain: Math.max(...closes.map((c, i) => ratioOf(c, featureCloses[i]))) }));
  }
  if (closes.length > 0 && taxCloses.length > 0) {
    console.log(JSON.stringify({ worst_taxed_over_plain_cpu_per_invoice: Math.max(...taxCloses.map((t, i) => taxes.cpuRatio(closes[i], t))) }));
  }
  if (process.env.WRITE_README !== '0') writeReadme(meta, closes, featureCloses, taxCloses, lists, setup.setup_s);
  // A taxed close whose invoices are wrong fails the bench.
  const failed = [...closes, ...featureCloses, ...taxCloses].filter((r) => !r.check.ok);
  if (failed.length > 0) {
    console.error(`FAILED: ${failed.map((r) => `${r.scenario}: ${r.check.problems.join('; ')}`).join(' | ')}`);
    process.exit(1);
  }
}

/**
 * A stack on the run's copy with the period job off, then stopped (the timed close starts fresh
 * processes): with `taxed`, the tax settings, rate and plan rates set through its gateway
 * (taxes.configureTaxes; answers the rate's id).
 */
async function prepareCopy(brokers, runDb, setup, taxed) {
  const stack = await startStack(brokers, '', runDb, false, { BILLING_INTERVAL_MS: '0' });
  const api = apiClient(stack.url, stack.key);
  try {
    return taxed ? await taxes.configureTaxes(api, setup) : undefined;
  } finally {
    await api.pool.close();
    await stack.stop(true);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
