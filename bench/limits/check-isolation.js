/**
 * Issue #48 part 3: the entitlement check is not slowed by billing's work. On the process stack
 * (customer, wallet, ingestion-aggregator, billing, entitlements, gateway as separate processes,
 * their dist/main.js with the Dockerfile's node flags), per run:
 *
 * 1. the check open loop at RATE for SECONDS (after WARMUP_S of it), billing idle: p50/p99/max;
 * 2. the proxied floor (ceilings.js: the minimal proxied request) at RATE for SECONDS;
 * 3. the check again at RATE for SECONDS while billing closes SUBSCRIPTIONS subscriptions' period
 *    (their DAILY period moved back in SQL so that it ended a second ago; the period job, every
 *    second, takes them all): p50/p99/max, and how many invoices the close made meanwhile;
 *    then it waits until the close made every invoice before the next run.
 *
 * Reported per run: both p99s and their ratio (goal: during / idle <= 1.5), CPU µs per check
 * per process (gateway, entitlements; billing's beside it) of both windows beside the floor's
 * server + proxy, the CPU model; worst of RUNS.
 *
 *   npm run build && KAFKA_BROKERS=127.0.0.1:9092 node bench/limits/check-isolation.js
 *   # RUNS (3), RATE (1000), SECONDS (20), WARMUP_S (5), CUSTOMERS (1000), SUBSCRIPTIONS (10000)
 *   # a quick end-to-end try: RUNS=1 RATE=200 SECONDS=5 CUSTOMERS=50 SUBSCRIPTIONS=300
 */
const { execFileSync } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const { Client } = require('pg');
const { apiClient, adminQuery: admin, latencyFigures, inParallel, ADMIN_URL, sleep } = require('../common');
const { startStack, setUp } = require('./stack');
const { leanClient } = require('../lean-client');
const { proxiedFloor, openLoop } = require('./ceilings');
const { cpuMeter, cpuModel, ratio, processCpu } = require('./report');

const RUNS = Number(process.env.RUNS || 3);
const RATE = Number(process.env.RATE || 1000);
const SECONDS = Number(process.env.SECONDS || 20);
const WARMUP_S = Number(process.env.WARMUP_S || 5);
const CUSTOMERS = Number(process.env.CUSTOMERS || 1000);
const SUBSCRIPTIONS = Number(process.env.SUBSCRIPTIONS || 10_000);

const round = (v, d = 2) => Number(v.toFixed(d));

/**
 * PIN (default 1 on a machine of 2 cores or more): the check's side (gateway, entitlements, this
 * load generator and the floor it starts) on core 0, billing's side (billing, the other services,
 * every Postgres process and the Kafka broker; new Postgres backends inherit the postmaster's) on
 * the others, as separate nodes or CPU requests would place them. What a process of its own buys:
 * the check inside billing's process could not be kept off the close's cores. PIN=0 shares every
 * core (on 2 cores the close's Postgres and billing work then takes them both; see the README).
 */
const PIN = process.env.PIN !== '0' && os.cpus().length >= 2;
/**
 * PROJECTOR (default 1): the entitlements service as two replicas (ADR 0061): the check-only one
 * behind the gateway (ENTITLEMENTS_PROJECTION=false) on the check's side, and the one that
 * applies billing's changes to the projection (billing-events: every event of the close) on
 * billing's side, where that work belongs. PROJECTOR=0: one replica does both, on the check's side.
 */
const PROJECTOR = process.env.PROJECTOR !== '0';
const pidsOf = (comm, also = () => true) =>
  fs.readdirSync('/proc').filter((e) => /^\d+$/.test(e)).filter((pid) => {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      return stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) === comm && also(pid);
    } catch {
      return false;
    }
  });
const backSide = () => [...pidsOf('postgres'), ...pidsOf('java', (pid) => fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('kafka'))];
const pin = (cpus, pids) => {
  for (const pid of pids) {
    try {
      execFileSync('taskset', ['-a', '-cp', cpus, String(pid)], { stdio: 'ignore' });
    } catch {
      // the process ended
    }
  }
};
const allCores = () => `0-${os.cpus().length - 1}`;
const rest = () => `1-${os.cpus().length - 1}`;

/** SUBSCRIPTIONS customers, each with a subscription to a DAILY plan of one fixed fee: the close's work. */
async function setUpClose(api) {
  const plan = await api.must('POST', '/v1/plans', { name: 'Daily', prices: [{ type: 'FIXED', amount: '1', currency: 'usd', billing_model: 'FLAT_FEE', billing_period: 'DAILY', invoice_cadence: 'ADVANCE' }] }, 201);
  await inParallel(SUBSCRIPTIONS, 16, async (i) => {
    const c = await api.must('POST', '/v1/customers', { external_customer_id: `close-${i}` }, 201);
    await api.must('POST', '/v1/subscriptions', { customer_id: c.id, plan_id: plan.id }, 201);
  });
  return plan.id;
}

/** The plan's subscriptions moved back so that their current period ended a second ago. */
async function endPeriodNow(pg, planId) {
  await pg.query(
    `WITH s AS (SELECT max(current_period_end) - now() + interval '1 second' AS shift FROM billing.subscriptions WHERE plan_id = $1)
     UPDATE billing.subscriptions SET start_date = start_date - s.shift, billing_anchor = billing_anchor - s.shift,
       current_period_start = current_period_start - s.shift, current_period_end = current_period_end - s.shift
     FROM s WHERE plan_id = $1`,
    [planId],
  );
}

const invoicesOf = async (pg, planId) =>
  (await pg.query(`SELECT count(*)::int AS n FROM billing.invoices i JOIN billing.subscriptions s ON s.id = i.subscription_id WHERE s.plan_id = $1`, [planId])).rows[0].n;

/**
 * Until billing is done with what came before (every invoice of the plan finalized, its process
 * under 5 % of a core over 2 s): the idle window must find billing idle, not still finishing the
 * set-up's or the last close's after-commit work. Answers the seconds it waited.
 */
async function billingSettled(pg, planId, pid) {
  const started = Date.now();
  for (;;) {
    const drafts = (await pg.query(`SELECT count(*)::int AS n FROM billing.invoices i JOIN billing.subscriptions s ON s.id = i.subscription_id WHERE s.plan_id = $1 AND i.status = 'draft'`, [planId])).rows[0].n;
    const before = processCpu(pid);
    await sleep(2000);
    if (drafts === 0 && (processCpu(pid) - before) / 2 < 0.05) return round((Date.now() - started) / 1000, 1);
    if (Date.now() - started > 1_800_000) throw new Error('billing did not settle within 30 minutes');
  }
}

/** A process's CPU per check; null where backends ended in the window (their ticks left /proc, so the sum fell). */
const perCheck = (us) => (us < 0 ? null : us);

async function measureCheck(stack, key, customers) {
  const client = leanClient(stack.url, { headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, connections: 64 });
  let i = 0;
  let wrong = 0;
  const send = async () => {
    const c = customers[(i += 1) % customers.length];
    const res = await client.call('POST', '/v1/entitlements/check', JSON.stringify({ customer_id: c.id, feature_lookup_key: 'sso' }));
    if (res.status !== 200) wrong += 1;
  };
  try {
    await openLoop(send, RATE, WARMUP_S);
    wrong = 0;
    const meter = cpuMeter({ gateway: stack.pids.gateway, entitlements: stack.pids.entitlements, billing: stack.pids.billing, ...(stack.pids.projector ? { projector: stack.pids.projector } : {}) });
    const latencies = await openLoop(send, RATE, SECONDS);
    const cpu = meter.perOp(latencies.length);
    return {
      requests: latencies.length,
      wrong_status: wrong,
      ...latencyFigures(latencies),
      cpu_us_per_check: { gateway: cpu.gateway, entitlements: cpu.entitlements, gateway_and_entitlements: round(cpu.gateway + cpu.entitlements, 1), billing: cpu.billing, ...(stack.pids.projector ? { projector: cpu.projector } : {}), postgres: perCheck(cpu.postgres), kafka: cpu.kafka },
    };
  } finally {
    await client.close();
  }
}

async function main() {
  // A run stopped by a signal gives Postgres and Kafka their cores back.
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.once(signal, () => {
      if (PIN) pin(allCores(), backSide());
      process.exit(130);
    });
  }
  const dbName = `bench_isolation_${Date.now().toString(36)}`;
  const key = `bsk_bench_${randomBytes(18).toString('base64url')}`;
  await admin(`CREATE DATABASE "${dbName}"`);
  console.log(`CPU: ${cpuModel()}; ${PIN ? 'check side pinned to core 0, billing, Postgres and Kafka to the rest' : 'every core shared'}; ${PROJECTOR ? 'a check-only entitlements replica and a projecting one (with billing)' : 'one entitlements replica (check and projection)'}; ${RUNS} runs; checks at ${RATE}/s for ${SECONDS} s; ${CUSTOMERS} checked customers; a close of ${SUBSCRIPTIONS} subscriptions`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${dbName}`;
  const pg = new Client({ connectionString: url.toString() });
  const results = [];
  let stack;
  try {
    // The period job every second; no renewal notices (DAILY periods are always within 3 days of one).
    stack = await startStack(dbName, key, { billing: { BILLING_INTERVAL_MS: '1000', SUBSCRIPTION_RENEWAL_NOTICE_DAYS: '0' } }, { projector: PROJECTOR });
    await pg.connect();
    if (PIN) {
      pin('0', [process.pid, stack.pids.gateway, stack.pids.entitlements]);
      pin(rest(), [...(stack.pids.projector ? [stack.pids.projector] : []), stack.pids.billing, stack.pids.customer, stack.pids.wallet, stack.pids['ingestion-aggregator'], ...backSide()]);
    }
    const api = apiClient(stack.url, key, { connections: 16 });
    const customers = await setUp(api, CUSTOMERS);
    const planId = await setUpClose(api);
    await api.pool.close();
    for (let run = 1; run <= RUNS; run += 1) {
      const settledSeconds = await billingSettled(pg, planId, stack.pids.billing);
      const idle = await measureCheck(stack, key, customers);
      const floor = await proxiedFloor({ rate: RATE, seconds: SECONDS });
      const before = await invoicesOf(pg, planId);
      await endPeriodNow(pg, planId);
      const during = await measureCheck(stack, key, customers);
      const madeDuring = (await invoicesOf(pg, planId)) - before;
      const started = Date.now();
      while ((await invoicesOf(pg, planId)) - before < SUBSCRIPTIONS) {
        if (Date.now() - started > 3_600_000) throw new Error('the close did not make every invoice within an hour');
        await sleep(1000);
      }
      const floorCpu = floor.cpu_us_per_request.server + floor.cpu_us_per_request.proxy;
      const result = {
        run,
        billing_settled_after_s: settledSeconds,
        idle,
        during_close: { ...during, invoices_made_meanwhile: madeDuring, close_still_running_at_end: madeDuring < SUBSCRIPTIONS },
        close_seconds: round((Date.now() - started) / 1000 + WARMUP_S + SECONDS, 1),
        floor,
        p99_during_vs_idle: ratio(during.p99_ms, idle.p99_ms).ratio,
        cpu_vs_floor: { idle: ratio(idle.cpu_us_per_check.gateway_and_entitlements, floorCpu).ratio, during_close: ratio(during.cpu_us_per_check.gateway_and_entitlements, floorCpu).ratio },
      };
      results.push(result);
      console.log(JSON.stringify(result));
    }
  } finally {
    if (PIN) pin(allCores(), backSide());
    await pg.end().catch(() => undefined);
    if (stack) await stack.stop();
    await admin(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
  }
  const worst = (pick) => Math.max(...results.map(pick));
  console.log('\n| figure (worst of runs) | idle | during the close | floor |');
  console.log('|---|---|---|---|');
  console.log(`| check p99 ms | ${worst((r) => r.idle.p99_ms)} | ${worst((r) => r.during_close.p99_ms)} | ${worst((r) => r.floor.p99_ms)} |`);
  console.log(`| CPU µs a check, gateway + entitlements | ${worst((r) => r.idle.cpu_us_per_check.gateway_and_entitlements)} | ${worst((r) => r.during_close.cpu_us_per_check.gateway_and_entitlements)} | ${worst((r) => r.floor.cpu_us_per_request.server + r.floor.cpu_us_per_request.proxy)} (server + proxy) |`);
  console.log(`| p99 during / idle (goal <= 1.5) | | ${worst((r) => r.p99_during_vs_idle)} | |`);
  console.log(`| invoices the close made in the window (of ${SUBSCRIPTIONS}) | | ${Math.min(...results.map((r) => r.during_close.invoices_made_meanwhile))} (fewest) | |`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
