import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { startProcessStack, type ProcessStack } from './support/stack';

const ROOT = path.resolve(__dirname, '..');

describe('the seven services as separate processes (real Postgres and Kafka)', () => {
  let stack: ProcessStack;

  beforeAll(async () => {
    stack = await startProcessStack();
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('every service answers /healthz and /readyz on its own port', async () => {
    for (const [name, url] of Object.entries(stack.urls)) {
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
      const ready = await fetch(`${url}/readyz`);
      expect(ready.status).toBe(200);
      // The entitlements service is ready once its projection was seeded from billing (ADR 0061).
      const checks = name === 'entitlements' ? { database: true, broker: true, projection: true } : { database: true, broker: true };
      expect([name, await ready.json()]).toEqual([name, { status: 'ready', checks }]);
    }
  });

  it('the gateway authenticates: 401 without or with a bad key, 403 without the permission, both header forms', async () => {
    expect((await stack.api.withKey(undefined).get('/v1/api-keys')).status).toBe(401);
    expect((await stack.api.withKey('bsk_wrong').get('/v1/api-keys')).status).toBe(401);
    expect((await stack.api.get('/v1/api-keys')).status).toBe(200);
    expect((await stack.api.withKey(stack.api.key, 'x-api-key').get('/v1/api-keys')).status).toBe(200);
    const created = await stack.api.post('/v1/api-keys', { name: 'no-perms', permissions: ['customers:read'] });
    expect(created.status).toBe(201);
    const denied = await stack.api.withKey(created.body.key).get('/v1/api-keys');
    expect(denied.status).toBe(403);
    expect(denied.body.error.internal_error).toBe('permission_denied');
  });

  it('services refuse calls that do not carry the internal token', async () => {
    const res = await fetch(`${stack.urls.customer}/v1/customers`, { headers: { 'x-tenant-id': 'tenant-a', 'x-environment-id': 'production' } });
    expect(res.status).toBe(401);
    const body = await res.json();
    expect(body).toMatchObject({ success: false, error: { internal_error: 'permission_denied' } });
  });

  it('keeps the caller request id across the gateway', async () => {
    const res = await stack.api.get('/v1/api-keys', { 'x-request-id': 'req-e2e-12345' });
    expect(res.headers['x-request-id']).toBe('req-e2e-12345');
  });

  it('a service given a bad setting stops at start naming the variable', () => {
    const result = spawnSync(process.execPath, [path.join(ROOT, 'services/customer/dist/main.js')], {
      env: { ...process.env, DATABASE_URL: 'mysql://nope', KAFKA_BROKERS: 'x', INTERNAL_TOKEN: 'short' },
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('DATABASE_URL');
    expect(result.stderr).toContain('KAFKA_BROKERS');
    expect(result.stderr).toContain('INTERNAL_TOKEN');
  });
});
