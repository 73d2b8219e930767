import { startIntegrationStack, TEST_ENVIRONMENT, TEST_TENANT, type IntegrationStack } from '../../support/stack';

type KeyView = { id: string; environment_id: string };

/** Issue #30 1c: `api_keys:write` manages the keys of its own environment; `api_keys:tenant` widens it to the tenant. */
describe('API keys are managed per environment unless the key holds api_keys:tenant (real Postgres and Kafka)', () => {
  let stack: IntegrationStack;

  beforeAll(async () => {
    stack = await startIntegrationStack();
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const idsOf = (items: KeyView[]) => items.map((k) => k.id);

  it('an environment key lists, creates and revokes the keys of its own environment only', async () => {
    // The bootstrap key has `*`, so api_keys:tenant: it may create a key of another environment.
    const staging = await stack.api.post('/v1/api-keys', { name: 'staging reader', permissions: ['api_keys:read'], environment_id: 'staging' });
    expect(staging.status).toBe(201);
    expect(staging.body).toMatchObject({ tenant_id: TEST_TENANT, environment_id: 'staging' });
    const admin = stack.api.withKey(await stack.keyFor(TEST_TENANT, TEST_ENVIRONMENT, ['api_keys:read', 'api_keys:write', 'customers:read']));

    const listed = await admin.get('/v1/api-keys?limit=1000');
    expect(listed.status).toBe(200);
    expect(idsOf(listed.body.items)).not.toContain(staging.body.id);
    expect(listed.body.items.every((k: KeyView) => k.environment_id === TEST_ENVIRONMENT)).toBe(true);
    expect(listed.body.pagination.total).toBe(listed.body.items.length);
    const tenantWide = await stack.api.get('/v1/api-keys?limit=1000');
    expect(idsOf(tenantWide.body.items)).toContain(staging.body.id);
    expect(tenantWide.body.pagination.total).toBe(listed.body.pagination.total + 1);

    // Minting a key of another environment: 403 naming the permission, and nothing created.
    const elsewhere = await admin.post('/v1/api-keys', { name: 'x', permissions: ['customers:read'], environment_id: 'staging' });
    expect(elsewhere.status).toBe(403);
    expect(elsewhere.body).toMatchObject({
      success: false,
      error: { internal_error: 'permission_denied', details: { field: 'environment_id', permission: 'api_keys:tenant' } },
    });
    expect((await stack.api.get('/v1/api-keys?limit=1000')).body.pagination.total).toBe(tenantWide.body.pagination.total);

    // Its own environment, named or by default, is fine.
    const named = await admin.post('/v1/api-keys', { name: 'named', permissions: ['customers:read'], environment_id: TEST_ENVIRONMENT });
    expect(named.status).toBe(201);
    const implicit = await admin.post('/v1/api-keys', { name: 'implicit', permissions: ['customers:read'] });
    expect(implicit.status).toBe(201);
    expect(implicit.body.environment_id).toBe(TEST_ENVIRONMENT);

    // A key of another environment is invisible: 404 as for one that does not exist, and it still works.
    const revokeOther = await admin.delete(`/v1/api-keys/${staging.body.id}`);
    expect(revokeOther.status).toBe(404);
    expect(revokeOther.body.error.internal_error).toBe('not_found');
    expect((await stack.api.withKey(staging.body.key).get('/v1/api-keys')).status).toBe(200);
    const revokeOwn = await admin.delete(`/v1/api-keys/${named.body.id}`);
    expect(revokeOwn.status).toBe(204);
    expect((await stack.api.withKey(named.body.key).get('/v1/customers')).status).toBe(401);
  });

  it('a key of another environment lists only that environment', async () => {
    const stagingAdmin = stack.api.withKey(await stack.keyFor(TEST_TENANT, 'staging', ['api_keys:read', 'api_keys:write']));
    const created = await stagingAdmin.post('/v1/api-keys', { name: 's', permissions: ['api_keys:read'] });
    expect(created.body.environment_id).toBe('staging');
    const listed = await stagingAdmin.get('/v1/api-keys?limit=1000');
    expect(listed.body.items.length).toBeGreaterThan(0);
    expect(listed.body.items.every((k: KeyView) => k.environment_id === 'staging')).toBe(true);
    expect(idsOf(listed.body.items)).toContain(created.body.id);
  });

  it('api_keys:tenant manages every environment of the tenant, and only a key holding it can grant it', async () => {
    const writer = stack.api.withKey(await stack.keyFor(TEST_TENANT, TEST_ENVIRONMENT, ['api_keys:write', 'customers:read']));
    const escalate = await writer.post('/v1/api-keys', { name: 'x', permissions: ['api_keys:tenant'] });
    expect(escalate.status).toBe(403);
    expect(escalate.body.error.details).toMatchObject({ field: 'permissions', missing: ['api_keys:tenant'] });

    const granted = await stack.api.post('/v1/api-keys', { name: 'tenant admin', permissions: ['api_keys:read', 'api_keys:write', 'api_keys:tenant'] });
    expect(granted.status).toBe(201);
    const tenantAdmin = stack.api.withKey(granted.body.key);
    const sandbox = await tenantAdmin.post('/v1/api-keys', { name: 'sb', permissions: ['api_keys:read'], environment_id: 'sandbox' });
    expect(sandbox.status).toBe(201);
    expect(sandbox.body.environment_id).toBe('sandbox');
    const listed = await tenantAdmin.get('/v1/api-keys?limit=1000');
    expect(new Set(listed.body.items.map((k: KeyView) => k.environment_id))).toEqual(new Set([TEST_ENVIRONMENT, 'staging', 'sandbox']));
    expect((await tenantAdmin.delete(`/v1/api-keys/${sandbox.body.id}`)).status).toBe(204);
    // Still one tenant: another tenant's keys stay out of reach.
    const otherTenant = await stack.keyFor('tenant-b', TEST_ENVIRONMENT, ['api_keys:read']);
    const other = (await stack.api.withKey(otherTenant).get('/v1/api-keys')).body.items[0] as KeyView;
    expect(idsOf(listed.body.items)).not.toContain(other.id);
    expect((await tenantAdmin.delete(`/v1/api-keys/${other.id}`)).status).toBe(404);
  });
});
