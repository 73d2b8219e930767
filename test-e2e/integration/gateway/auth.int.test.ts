import { type ApiResponse } from '@billstream/testing';
import { startIntegrationStack, TEST_ENVIRONMENT, TEST_TENANT, type IntegrationStack } from '../../support/stack';

describe('gateway authentication and API keys (real Postgres and Kafka)', () => {
  let stack: IntegrationStack;

  beforeAll(async () => {
    stack = await startIntegrationStack();
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('answers 401 in the envelope without a key', async () => {
    const res = await stack.api.withKey(undefined).get('/v1/api-keys');
    expect(res.status).toBe(401);
    expect(res.body).toEqual({
      success: false,
      error: expect.objectContaining({ internal_error: 'permission_denied', message: expect.stringContaining('Missing API key') }),
    });
  });

  it('answers 401 for an unknown key, with either header form', async () => {
    for (const style of ['bearer', 'x-api-key'] as const) {
      const res = await stack.api.withKey('bsk_not_a_real_key_at_all', style).get('/v1/api-keys');
      expect(res.status).toBe(401);
      expect(res.body.success).toBe(false);
      expect(res.body.error.internal_error).toBe('permission_denied');
    }
  });

  it('accepts both header forms, and Bearer wins when both are sent', async () => {
    const bearer = await stack.api.get('/v1/api-keys');
    expect(bearer.status).toBe(200);
    const xApiKey = await stack.api.withKey(stack.api.key, 'x-api-key').get('/v1/api-keys');
    expect(xApiKey.status).toBe(200);
    const both = await stack.api
      .withKey(undefined)
      .get('/v1/api-keys', { authorization: `Bearer ${stack.api.key}`, 'x-api-key': 'bsk_wrong' });
    expect(both.status).toBe(200);
    const bothWrongBearer = await stack.api
      .withKey(undefined)
      .get('/v1/api-keys', { authorization: 'Bearer bsk_wrong', 'x-api-key': stack.api.key! });
    expect(bothWrongBearer.status).toBe(401);
  });

  it('creates a key shown once, lists it without the secret, and a revoked key gives 401', async () => {
    const created = await stack.api.post('/v1/api-keys', { name: 'reader', permissions: ['api_keys:read'] });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      id: expect.stringMatching(/^key_[0-9A-Z]{26}$/),
      key: expect.stringMatching(/^bsk_/),
      name: 'reader',
      permissions: ['api_keys:read'],
      tenant_id: TEST_TENANT,
      environment_id: TEST_ENVIRONMENT,
    });
    const reader = stack.api.withKey(created.body.key, 'x-api-key');
    const listed = await reader.get('/v1/api-keys');
    expect(listed.status).toBe(200);
    expect(listed.text).not.toContain(created.body.key);
    expect(listed.body.items.map((k: { id: string }) => k.id)).toContain(created.body.id);
    expect(listed.body.pagination).toEqual({ total: expect.any(Number), limit: 50, offset: 0 });

    const revoked = await stack.api.delete(`/v1/api-keys/${created.body.id}`);
    expect(revoked.status).toBe(204);
    expect(revoked.text).toBe('');
    const after = await reader.get('/v1/api-keys');
    expect(after.status).toBe(401);
    expect(after.body.error.internal_error).toBe('permission_denied');
  });

  it('answers 403 when the key lacks the permission, and a key cannot grant more than its creator has', async () => {
    const reader = await stack.api.post('/v1/api-keys', { name: 'r', permissions: ['api_keys:read'] });
    const readerApi = stack.api.withKey(reader.body.key);
    const denied = await readerApi.post('/v1/api-keys', { name: 'x', permissions: ['api_keys:read'] });
    expect(denied.status).toBe(403);
    expect(denied.body.error.internal_error).toBe('permission_denied');

    const writer = await stack.api.post('/v1/api-keys', { name: 'w', permissions: ['api_keys:write'] });
    const escalate = await stack.api.withKey(writer.body.key).post('/v1/api-keys', { name: 'x', permissions: ['*'] });
    expect(escalate.status).toBe(403);
    expect(escalate.body.error.details).toMatchObject({ field: 'permissions' });
  });

  it('keeps tenants apart: another tenant neither lists nor revokes these keys (404)', async () => {
    const otherKey = await stack.keyFor('tenant-b', 'production');
    const other = stack.api.withKey(otherKey);
    const mine = await stack.api.post('/v1/api-keys', { name: 'mine', permissions: ['api_keys:read'] });
    const list = await other.get('/v1/api-keys');
    expect(list.body.items.map((k: { id: string }) => k.id)).not.toContain(mine.body.id);
    const del = await other.delete(`/v1/api-keys/${mine.body.id}`);
    expect(del.status).toBe(404);
    expect(del.body.error.internal_error).toBe('not_found');
  });

  it('refuses bad bodies with 400 naming the field, bad JSON, and unknown routes with 404', async () => {
    const unknownField = await stack.api.post('/v1/api-keys', { name: 'x', permissions: ['*'], colour: 'red' });
    expect(unknownField.status).toBe(400);
    expect(unknownField.body.error).toMatchObject({ internal_error: 'validation_error', details: { field: 'colour' } });
    const badPermission = await stack.api.post('/v1/api-keys', { name: 'x', permissions: ['root'] });
    expect(badPermission.status).toBe(400);
    expect(badPermission.body.error.details.field).toBe('permissions.0');
    const malformed = await stack.api.post('/v1/api-keys', '{"name": ');
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.internal_error).toBe('validation_error');
    const tooBig = await stack.api.post('/v1/api-keys', { name: 'x'.repeat(1024 * 1024 + 10), permissions: ['*'] });
    expect(tooBig.status).toBe(413);
    expect(tooBig.body.error.internal_error).toBe('validation_error');
    const unknown = await stack.api.get('/v1/no-such-thing');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ success: false, error: { internal_error: 'not_found' } });
  });
});

describe('per-tenant rate limit', () => {
  let stack: IntegrationStack;

  beforeAll(async () => {
    stack = await startIntegrationStack({ rateLimitRps: 2, rateLimitBurst: 5 });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('gives a tenant over its rate 429 with Retry-After while another tenant is unaffected', async () => {
    const otherKey = await stack.keyFor('tenant-b', 'production');
    const statuses: number[] = [];
    let limited: ApiResponse | undefined;
    for (let i = 0; i < 12; i += 1) {
      const res = await stack.api.get('/v1/api-keys');
      statuses.push(res.status);
      if (res.status === 429) limited = res;
    }
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(5);
    expect(statuses).toContain(429);
    expect(limited!.headers['retry-after']).toMatch(/^[1-9]\d*$/);
    expect(limited!.body.error.internal_error).toBe('service_unavailable');

    const other = await stack.api.withKey(otherKey).get('/v1/api-keys');
    expect(other.status).toBe(200);
  });
});
