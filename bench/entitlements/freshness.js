/**
 * How long a catalog or subscription change takes to reach the entitlement check now that it
 * travels through billing-events to the entitlements service's projection (ADR 0061): on the
 * process stack, CHANGES times an entitlement is switched off and on (`PUT /v1/entitlements/{id}`)
 * and a subscription paused and resumed, each followed by checks every 2 ms until one shows it;
 * the time from the change's answer to that check's answer. p50/p99/max per kind.
 *
 *   npm run build && KAFKA_BROKERS=127.0.0.1:9092 node bench/entitlements/freshness.js   # CHANGES (20)
 */
const { randomBytes } = require('node:crypto');
const { apiClient, adminQuery: admin, percentile, sleep } = require('../common');
const { startStack, setUp } = require('../limits/stack');
const { cpuModel } = require('../limits/report');

const CHANGES = Number(process.env.CHANGES || 20);

async function until(api, customerId, allowed) {
  const from = Date.now();
  for (;;) {
    const res = await api.call('POST', '/v1/entitlements/check', { customer_id: customerId, feature_lookup_key: 'sso' });
    if (res.status === 200 && res.body.allowed === allowed) return Date.now() - from;
    if (Date.now() - from > 30_000) throw new Error(`the check did not show allowed=${allowed} within 30 s`);
    await sleep(2);
  }
}

async function main() {
  const dbName = `bench_freshness_${Date.now().toString(36)}`;
  const key = `bsk_bench_${randomBytes(18).toString('base64url')}`;
  await admin(`CREATE DATABASE "${dbName}"`);
  let stack;
  const times = { entitlement: [], subscription: [] };
  try {
    stack = await startStack(dbName, key);
    const api = apiClient(stack.url, key, { connections: 4 });
    const [c] = await setUp(api, 1);
    const entitlement = (await api.must('GET', '/v1/entitlements', undefined, 200)).items[0];
    const sub = (await api.must('GET', `/v1/subscriptions?customer_id=${c.id}`, undefined, 200)).items[0];
    for (let i = 0; i < CHANGES; i += 1) {
      await api.must('PUT', `/v1/entitlements/${entitlement.id}`, { is_enabled: false }, 200);
      times.entitlement.push(await until(api, c.id, false));
      await api.must('PUT', `/v1/entitlements/${entitlement.id}`, { is_enabled: true }, 200);
      times.entitlement.push(await until(api, c.id, true));
      await api.must('POST', `/v1/subscriptions/${sub.id}/pause`, {}, 200);
      times.subscription.push(await until(api, c.id, false));
      await api.must('POST', `/v1/subscriptions/${sub.id}/resume`, {}, 200);
      times.subscription.push(await until(api, c.id, true));
    }
    await api.pool.close();
  } finally {
    if (stack) await stack.stop();
    await admin(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
  }
  console.log(`CPU: ${cpuModel()}; ${CHANGES * 2} changes of each kind`);
  console.log('| change | p50 ms | p99 ms | max ms |\n|---|---|---|---|');
  for (const [kind, list] of Object.entries(times)) {
    list.sort((a, b) => a - b);
    console.log(`| ${kind} | ${percentile(list, 50)} | ${percentile(list, 99)} | ${list[list.length - 1]} |`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
