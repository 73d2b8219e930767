import type { Request, Response } from 'express';
import { InProcessBus } from '@billstream/bus';
import { contextOf, listen, type Listening, type RouteRunner } from '@billstream/http';
import { ApiClient, createTestDatabase, migratedDb, randomKey, testLogger, type TestDatabase } from '@billstream/testing';
import type { Db } from '@billstream/db';
import { createGateway } from './gateway';
import { migrations, SCHEMA } from './migrations';

/**
 * The embedded default hands the gateway the route tables of the services in its process:
 * a route found there answers the gateway's own request (authenticated and scoped), and a
 * route missing from it is still forwarded over HTTP.
 */
describe('gateway with in-process service routes (real Postgres)', () => {
  let database: TestDatabase;
  let db: Db;
  let http: Listening;
  let api: ApiClient;
  const seen: Array<{ tenantId: string; actor: string; id: string }> = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    db = await migratedDb(database.url, SCHEMA, migrations);
    const key = randomKey();
    const getCustomer: RouteRunner = async (req: Request, res: Response) => {
      const ctx = contextOf(res);
      seen.push({ tenantId: ctx.tenantId, actor: ctx.actor, id: req.params.id as string });
      res.status(200).json({ id: req.params.id, answered: 'in-process' });
    };
    const gateway = createGateway(
      { db, bus: new InProcessBus(), logger: testLogger('gateway') },
      {
        internalToken: 'test-internal-token-0123456789',
        // Nothing listens here: a forwarded call can only fail.
        serviceUrls: { customer: 'http://127.0.0.1:9' },
        serviceRoutes: { customer: new Map([['getCustomer', getCustomer]]) },
        rateLimitRps: 1000,
        rateLimitBurst: 1000,
        bootstrap: { key, tenantId: 'tenant-r', environmentId: 'production' },
      },
    );
    await gateway.start();
    http = await listen(gateway.app, 0, '127.0.0.1');
    api = new ApiClient(http.url, key);
  });
  afterAll(async () => {
    await http?.close();
    await db?.destroy();
    await database?.drop();
  });

  it('answers a route of the table in process, with the caller authenticated and scoped', async () => {
    const res = await api.get('/v1/customers/cust_123');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: 'cust_123', answered: 'in-process' });
    expect(seen).toEqual([{ tenantId: 'tenant-r', actor: expect.stringMatching(/^key_/), id: 'cust_123' }]);
  });

  it('still authenticates first: no key, no call', async () => {
    const res = await api.withKey(undefined).get('/v1/customers/cust_456');
    expect(res.status).toBe(401);
    expect(seen.map((s) => s.id)).not.toContain('cust_456');
  });

  it('forwards a route missing from the table over HTTP (503 when the service is unreachable)', async () => {
    const res = await api.get('/v1/customers');
    expect(res.status).toBe(503);
    expect(res.body.error.internal_error).toBe('service_unavailable');
  });
});
