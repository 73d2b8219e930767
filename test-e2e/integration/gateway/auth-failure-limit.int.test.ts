import { createHash } from 'node:crypto';
import { ApiKeyStore } from '@billstream/gateway';
import { randomKey, type ApiResponse } from '@billstream/testing';
import { startIntegrationStack, TEST_ENVIRONMENT, TEST_TENANT, type IntegrationStack } from '../../support/stack';

const sha256 = (key: string) => createHash('sha256').update(key, 'utf8').digest('hex');

function expectAddressLimited(res: ApiResponse) {
  expect(res.status).toBe(429);
  expect(res.headers['retry-after']).toMatch(/^[1-9]\d*$/);
  expect(res.body).toMatchObject({
    success: false,
    error: { internal_error: 'service_unavailable', message: expect.stringContaining('without a valid API key') },
  });
}

/** Issue #30 1h: failed authentications are limited per source address, before any key lookup. */
describe('failed authentications per source address (real Postgres and Kafka)', () => {
  let stack: IntegrationStack;
  let lookups: jest.SpiedFunction<ApiKeyStore['findByHash']>;

  beforeAll(async () => {
    // A burst of 5 failures and about one more a minute: the test never waits for a refill. Keys
    // stay cached for a minute, so the valid key in use stays known however slow the machine.
    stack = await startIntegrationStack({
      extra: { env: { AUTH_FAILURE_RATE_LIMIT_RPS: '0.02', AUTH_FAILURE_RATE_LIMIT_BURST: '5', API_KEY_CACHE_TTL_MS: '60000' } },
    });
  });
  afterAll(async () => {
    lookups?.mockRestore();
    await stack?.stop();
  });

  it('answers 401 for the burst of bad keys, then 429 without querying the key store; a known valid key still passes', async () => {
    // The valid key is in use (so cached) before the flood.
    expect((await stack.api.get('/v1/api-keys')).status).toBe(200);
    const notYetUsed = await stack.keyFor(TEST_TENANT, TEST_ENVIRONMENT, ['customers:read']);
    lookups = jest.spyOn(ApiKeyStore.prototype, 'findByHash');
    const bad = Array.from({ length: 15 }, () => randomKey());
    const badHashes = new Set(bad.map(sha256));
    const badLookups = () => lookups.mock.calls.filter(([, hash]) => badHashes.has(hash)).length;

    const statuses: number[] = [];
    for (const key of bad.slice(0, 5)) statuses.push((await stack.api.withKey(key).get('/v1/customers')).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401]);
    expect(badLookups()).toBe(5);

    for (const key of bad.slice(5, 12)) expectAddressLimited(await stack.api.withKey(key).get('/v1/customers'));
    // Other header form, a missing key, a spoofed X-Forwarded-For (no trusted proxy), another route: all limited.
    expectAddressLimited(await stack.api.withKey(bad[12], 'x-api-key').get('/v1/api-keys'));
    expectAddressLimited(await stack.api.withKey(undefined).get('/v1/customers'));
    expectAddressLimited(await stack.api.withKey(bad[13]).get('/v1/customers', { 'x-forwarded-for': '198.51.100.23' }));
    expectAddressLimited(await stack.api.withKey(bad[14]).post('/v1/entitlements/check', { external_customer_id: 'c', feature_lookup_key: 'f' }));
    expect(badLookups()).toBe(5);

    // The key in use still works from the same address.
    const valid = await stack.api.get('/v1/api-keys');
    expect(valid.status).toBe(200);
    // A valid key this gateway has not seen would need a lookup: refused like any other until the address refills.
    expectAddressLimited(await stack.api.withKey(notYetUsed).get('/v1/customers'));
    expect(lookups.mock.calls.filter(([, hash]) => hash === sha256(notYetUsed))).toHaveLength(0);
  });
});

describe('failed authentications behind a trusted proxy', () => {
  let stack: IntegrationStack;

  beforeAll(async () => {
    stack = await startIntegrationStack({
      extra: { env: { AUTH_FAILURE_RATE_LIMIT_RPS: '0.02', AUTH_FAILURE_RATE_LIMIT_BURST: '3', TRUSTED_PROXY_HOPS: '1' } },
    });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('counts per client address of X-Forwarded-For, so one client over its limit leaves the others their 401s', async () => {
    const from = (address: string) => ({ 'x-forwarded-for': `203.0.113.250, ${address}` });
    expect((await stack.api.get('/v1/customers', from('198.51.100.1'))).status).toBe(200);
    const statuses: number[] = [];
    for (let i = 0; i < 5; i += 1) statuses.push((await stack.api.withKey(randomKey()).get('/v1/customers', from('198.51.100.1'))).status);
    expect(statuses).toEqual([401, 401, 401, 429, 429]);
    expect((await stack.api.withKey(randomKey()).get('/v1/customers', from('198.51.100.2'))).status).toBe(401);
    expect((await stack.api.get('/v1/customers', from('198.51.100.1'))).status).toBe(200);
  });
});

describe('failed authentications on a lean route (ADR 0027: served without express when forwarded)', () => {
  let stack: IntegrationStack;

  beforeAll(async () => {
    stack = await startIntegrationStack({
      extra: { inProcessCalls: false, env: { AUTH_FAILURE_RATE_LIMIT_RPS: '0.02', AUTH_FAILURE_RATE_LIMIT_BURST: '2', API_KEY_CACHE_TTL_MS: '60000' } },
    });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('answers 401 then 429 on the entitlement check, and the valid key in use still reaches billing', async () => {
    const check = { external_customer_id: 'nobody', feature_lookup_key: 'seats' };
    const before = await stack.api.post('/v1/entitlements/check', check);
    expect([401, 429]).not.toContain(before.status);
    const statuses: number[] = [];
    for (let i = 0; i < 4; i += 1) statuses.push((await stack.api.withKey(randomKey()).post('/v1/entitlements/check', check)).status);
    expect(statuses).toEqual([401, 401, 429, 429]);
    expectAddressLimited(await stack.api.withKey(randomKey()).post('/v1/entitlements/check', check));
    const after = await stack.api.post('/v1/entitlements/check', check);
    expect(after.status).toBe(before.status);
  });
});
