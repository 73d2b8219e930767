import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { createDb, type Db } from '@billstream/db';
import { waitFor } from '@billstream/testing';
import { startIntegrationStack, type IntegrationStack } from '../../support/stack';

const run = promisify(execFile);
const SEED = path.resolve(__dirname, '../../../services/entitlements/dist/seed.js');

/**
 * The migration path of existing data (ADR 0061, docs/operations.md): the entitlements
 * service's projection seeded from billing's snapshot, by the operator's command, while the
 * service runs; rows are applied by version, so the seed and billing-events commute.
 */
describe('seeding the entitlements projection from billing', () => {
  let stack: IntegrationStack;
  let db: Db;

  beforeAll(async () => {
    stack = await startIntegrationStack();
    db = createDb({ databaseUrl: stack.database.url, schema: 'entitlements', poolMax: 2 });
  });
  afterAll(async () => {
    await db?.destroy();
    await stack?.stop();
  });

  const seed = () =>
    run(process.execPath, [SEED], {
      env: { ...process.env, DATABASE_URL: stack.database.url, BILLING_SERVICE_URL: stack.embedded.services.urls.billing!, INTERNAL_TOKEN: stack.embedded.services.internalToken },
    });

  it('restores what billing holds into an emptied projection, keeps newer versions, and the check answers from it', async () => {
    const feature = (await stack.api.post('/v1/features', { name: 'SSO', lookup_key: `sso-${Date.now()}`, type: 'BOOLEAN' })).body;
    const planId = (await stack.api.post('/v1/plans', { name: 'Plan', prices: [{ type: 'FIXED', billing_model: 'FLAT_FEE', amount: '10', currency: 'usd', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE' }] })).body.id;
    expect(planId).toEqual(expect.any(String));
    const entitlement = (await stack.api.post('/v1/entitlements', { plan_id: planId, feature_id: feature.id })).body;
    const c = (await stack.api.post('/v1/customers', { external_customer_id: `seeded-${Date.now()}` })).body;
    const sub = (await stack.api.post('/v1/subscriptions', { customer_id: c.id, plan_id: planId })).body;
    const body = { customer_id: c.id, feature_lookup_key: feature.lookup_key };
    const allowed = async () => (await stack.api.post('/v1/entitlements/check', body)).body.allowed as boolean;
    await waitFor(allowed, { what: 'the check granting through billing-events' });

    // A projection that never heard of them (the service's first start over existing data).
    for (const table of ['features', 'entitlements', 'subscriptions', 'projection_seeds']) await db(table).delete();
    await db.raw(`NOTIFY entitlements_access, '{}'`);
    await waitFor(async () => (await stack.api.post('/v1/entitlements/check', body)).status === 404, { what: 'the emptied projection answering' });

    const { stdout } = await seed();
    expect(stdout).toMatch(/seeded entitlements from billing: \d+ rows read/);
    await waitFor(allowed, { what: 'the seeded projection granting' });
    expect(await db('subscriptions').where({ id: sub.id }).first()).toMatchObject({ status: 'active', customer_id: c.id });
    expect((await db('projection_seeds').where({ source: 'billing' }).first()).rows).toBeGreaterThanOrEqual(3);

    // A newer version applied by its event stays when the seed runs again with the same rows.
    expect((await stack.api.put(`/v1/entitlements/${entitlement.id}`, { is_enabled: false })).status).toBe(200);
    await waitFor(async () => !(await allowed()), { what: 'the disabled entitlement reaching the check' });
    await seed();
    expect(await db('entitlements').where({ id: entitlement.id }).first()).toMatchObject({ is_enabled: false, version: 2 });
    // An older row (a snapshot read before that change) changes nothing.
    await db('entitlements').where({ id: entitlement.id }).update({ version: 5 });
    await seed();
    expect(await db('entitlements').where({ id: entitlement.id }).first()).toMatchObject({ is_enabled: false, version: 5 });
    expect(await allowed()).toBe(false);

    // A deletion in billing leaves a tombstone no seed revives.
    await db('entitlements').where({ id: entitlement.id }).update({ version: 2 });
    expect((await stack.api.delete(`/v1/entitlements/${entitlement.id}`)).status).toBe(204);
    await waitFor(async () => (await db('entitlements').where({ id: entitlement.id }).first())?.deleted === true, { what: 'the tombstone' });
    await seed();
    expect(await db('entitlements').where({ id: entitlement.id }).first()).toMatchObject({ deleted: true, version: 3 });
  });
});
