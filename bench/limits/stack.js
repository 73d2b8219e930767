/**
 * The process stack of bench/limits/routes.js, check-isolation.js and bench/soak/soak.js: customer,
 * wallet, ingestion-aggregator, billing, entitlements and gateway as separate processes (their dist/main.js with the
 * Dockerfile's node flags) on database `dbName` and Kafka (KAFKA_BROKERS, default
 * 127.0.0.1:9092), and its set-up through the gateway.
 */
const { gatewayEnv, inParallel, commonServiceEnv, launchAll, ADMIN_URL, freePort, stopProcess } = require('../common');

const BROKERS = process.env.KAFKA_BROKERS || '127.0.0.1:9092';
const TENANT = 'bench-tenant';

/**
 * `env` (optional): extra variables per service name. `projector` (optional): the entitlements
 * service as two replicas, a check-only one (ENTITLEMENTS_PROJECTION=false) behind the gateway
 * and a projecting one (`pids.projector`, no traffic) that applies billing's changes (ADR 0061).
 */
async function startStack(dbName, key, extraEnv = {}, { projector = false } = {}) {
  const dbUrl = new URL(ADMIN_URL);
  dbUrl.pathname = `/${dbName}`;
  const names = ['customer', 'wallet', 'ingestion-aggregator', 'billing', 'entitlements', 'gateway'];
  const ports = {};
  for (const n of names) ports[n] = await freePort();
  const url = (n) => `http://127.0.0.1:${ports[n]}`;
  const env = {
    customer: {},
    wallet: { CUSTOMER_SERVICE_URL: url('customer') },
    'ingestion-aggregator': {},
    billing: { CUSTOMER_SERVICE_URL: url('customer'), INGESTION_SERVICE_URL: url('ingestion-aggregator'), WALLET_SERVICE_URL: url('wallet'), BILLING_INTERVAL_MS: '3600000' },
    entitlements: { CUSTOMER_SERVICE_URL: url('customer'), INGESTION_SERVICE_URL: url('ingestion-aggregator'), BILLING_SERVICE_URL: url('billing') },
    gateway: gatewayEnv(url, key, TENANT, 'production'),
  };
  const common = commonServiceEnv({ dbUrl, dbName, brokers: BROKERS });
  const envOf = (n) => ({ ...common, ...env[n], ...(extraEnv[n] ?? {}), PORT: String(ports[n]) });
  let procs;
  if (projector) {
    // The projecting replica first (after billing, its seed's source): the check-only one is ready once the projection is seeded.
    const before = await launchAll(names.slice(0, 4), envOf, url);
    const port = String(await freePort());
    const projecting = await launchAll(['entitlements'], (n) => ({ ...envOf(n), ENTITLEMENTS_PROJECTION: 'true', PORT: port }), () => `http://127.0.0.1:${port}`);
    const after = await launchAll(names.slice(4), (n) => ({ ...envOf(n), ...(n === 'entitlements' ? { ENTITLEMENTS_PROJECTION: 'false' } : {}) }), url);
    procs = [...before, ...after, ...projecting];
  } else {
    procs = await launchAll(names, envOf, url);
  }
  return {
    url: url('gateway'),
    pids: { ...Object.fromEntries(names.map((n, i) => [n, procs[i].child.pid])), ...(projector ? { projector: procs[names.length].child.pid } : {}) },
    stop: async () => {
      for (const p of [...procs].reverse()) await stopProcess(p);
    },
  };
}

/**
 * A BOOLEAN feature `sso` on a plan, and `count` customers (`rc-<i>`) with a subscription to it
 * and a prepaid wallet of 1,000,000 credits each; waits until the check (the entitlements service) allows the last.
 * Answers the customers as `{ id, wallet }`.
 */
async function setUp(api, count) {
  const feature = await api.must('POST', '/v1/features', { name: 'SSO', lookup_key: 'sso', type: 'BOOLEAN' }, 201);
  const plan = await api.must('POST', '/v1/plans', { name: 'Pro', prices: [{ type: 'FIXED', amount: '49', currency: 'usd', billing_model: 'FLAT_FEE', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE' }] }, 201);
  await api.must('POST', '/v1/entitlements', { plan_id: plan.id, feature_id: feature.id, is_enabled: true }, 201);
  const customers = new Array(count);
  await inParallel(count, 8, async (i) => {
    const c = await api.must('POST', '/v1/customers', { external_customer_id: `rc-${i}`, name: `Route customer ${i}` }, 201);
    const w = await api.must('POST', '/v1/wallets', { customer_id: c.id, currency: 'usd', initial_credits_to_load: '1000000' }, 201);
    customers[i] = { id: c.id, wallet: w.id };
  });
  await inParallel(count, 8, async (i) => {
    await api.must('POST', '/v1/subscriptions', { customer_id: customers[i].id, plan_id: plan.id }, 201);
  });
  // The check answers once its projection knows the subscriptions (billing-events through Kafka, ADR 0061).
  for (let tries = 0; ; tries += 1) {
    const res = await api.call('POST', '/v1/entitlements/check', { customer_id: customers[count - 1].id, feature_lookup_key: 'sso' });
    if (res.status === 200 && res.body.allowed === true) break;
    if (tries > 200) throw new Error(`the check never allowed: ${res.status} ${JSON.stringify(res.body)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return customers;
}

module.exports = { startStack, setUp };
