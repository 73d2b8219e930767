import { createDb, type Db } from '@billstream/db';
import { createTestDatabase, testLogger, waitFor, type TestDatabase } from '@billstream/testing';
import { AccessCache } from './access-cache';
import { GRANTS_TTL_MS, GRANTS_TTL_NOTIFIED_MS } from './access-cache-timing';
import { AccessNotices } from './access-notices';

/**
 * Two entitlements replicas' check caches on one real Postgres (ADR 0025): a change made on one is
 * heard by the other at once through LISTEN/NOTIFY, so grants are kept 15 s instead of 1 s;
 * when the channel is lost a replica forgets what it held and is back to 1 s until it listens
 * again.
 */
const scope = { tenantId: 'ten_notices', environmentId: 'production' };
const other = { tenantId: 'ten_notices', environmentId: 'sandbox' };

describe('access change notices between entitlements replicas (real Postgres)', () => {
  let database: TestDatabase;
  let dbA: Db;
  let dbB: Db;
  let a: { cache: AccessCache; notices: AccessNotices };
  let b: { cache: AccessCache; notices: AccessNotices };
  let loads = 0;
  const load = (value: string) => async () => {
    loads += 1;
    return value;
  };
  const replica = (db: Db) => {
    const cache = new AccessCache();
    const notices = new AccessNotices(db, cache, testLogger());
    notices.start();
    return { cache, notices };
  };

  beforeAll(async () => {
    database = await createTestDatabase();
    dbA = createDb({ databaseUrl: database.url, schema: 'entitlements' });
    dbB = createDb({ databaseUrl: database.url, schema: 'entitlements' });
    a = replica(dbA);
    b = replica(dbB);
    await waitFor(() => a.cache.grantsTtlMs() === GRANTS_TTL_NOTIFIED_MS && b.cache.grantsTtlMs() === GRANTS_TTL_NOTIFIED_MS, {
      timeoutMs: 10_000,
      what: 'both replicas listening',
    });
  });
  afterAll(async () => {
    await a?.notices.stop();
    await b?.notices.stop();
    await dbA?.destroy();
    await dbB?.destroy();
    await database?.drop();
  });
  beforeEach(() => {
    loads = 0;
  });

  it("a subscription written on one replica drops that customer's grants on the other at once, and only those", async () => {
    const ttl = b.cache.grantsTtlMs();
    expect(await b.cache.get(scope, 'cus_1', 'grants', ttl, load('old-1'))).toBe('old-1');
    expect(await b.cache.get(scope, 'cus_2', 'grants', ttl, load('old-2'))).toBe('old-2');
    // Replica A's consumer committed a subscription of cus_1: the notice goes out.
    a.cache.customerChangedCommitted(scope, 'cus_1');
    await waitFor(async () => (await b.cache.get(scope, 'cus_1', 'grants', ttl, load('new-1'))) === 'new-1', {
      timeoutMs: 2000,
      intervalMs: 10,
      what: "replica B to reload cus_1's grants",
    });
    expect(await b.cache.get(scope, 'cus_2', 'grants', ttl, load('new-2'))).toBe('old-2');
    // Two first loads and one reload: polling B before the notice came served its cache.
    expect(loads).toBe(3);
  });

  it('a feature or entitlement change on one replica drops the whole tenant and environment on the other, only there', async () => {
    const ttl = b.cache.grantsTtlMs();
    await b.cache.get(scope, null, 'feature|sso', ttl, load('f-old'));
    await b.cache.get(other, null, 'feature|sso', ttl, load('o-old'));
    a.cache.scopeChanged(scope);
    await waitFor(async () => (await b.cache.get(scope, null, 'feature|sso', ttl, load('f-new'))) === 'f-new', {
      timeoutMs: 2000,
      intervalMs: 10,
      what: 'replica B to reload the feature',
    });
    expect(await b.cache.get(other, null, 'feature|sso', ttl, load('o-new'))).toBe('o-old');
  });

  it('a lost channel makes a replica forget what it held and keep grants 1 s until it listens again', async () => {
    await b.cache.get(scope, 'cus_3', 'grants', b.cache.grantsTtlMs(), load('before'));
    // Postgres ends the listening sessions (as a restart or a network cut would).
    await dbA.raw("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'billstream-listen-entitlements_access' AND datname = current_database()");
    await waitFor(() => b.cache.grantsTtlMs() === GRANTS_TTL_MS, { timeoutMs: 5000, intervalMs: 5, what: 'replica B to notice the loss' }).catch(() => undefined);
    // Whether or not the 1 s phase was seen (it may reconnect within milliseconds), what it held is gone.
    expect(await b.cache.get(scope, 'cus_3', 'grants', b.cache.grantsTtlMs(), load('after'))).toBe('after');
    await waitFor(() => b.cache.grantsTtlMs() === GRANTS_TTL_NOTIFIED_MS, { timeoutMs: 10_000, what: 'replica B listening again' });
    // And it hears changes again.
    const ttl = b.cache.grantsTtlMs();
    await b.cache.get(scope, 'cus_4', 'grants', ttl, load('x-old'));
    a.cache.scopeChanged(scope);
    await waitFor(async () => (await b.cache.get(scope, 'cus_4', 'grants', ttl, load('x-new'))) === 'x-new', {
      timeoutMs: 2000,
      intervalMs: 10,
      what: 'replica B to hear again',
    });
  });
});
