import { heldTransaction } from '@billstream/observability';
import { createTestDatabase, type TestDatabase } from '@billstream/testing';
import { createDb, type Db } from './index';

describe('transactions marked as held (ADR 0055, real Postgres)', () => {
  let database: TestDatabase;
  let db: Db;

  beforeAll(async () => {
    database = await createTestDatabase();
    db = createDb({ databaseUrl: database.url, schema: 'public' });
  });
  afterAll(async () => {
    await db?.destroy();
    await database?.drop();
  });

  it('a transaction callback holds a transaction until it settles, nested ones included; outside it holds none', async () => {
    expect(heldTransaction()).toBeUndefined();
    let inside: unknown;
    let nested: unknown;
    let afterwards: Promise<unknown> | undefined;
    const answer = await db.transaction(async (trx) => {
      inside = { ...heldTransaction() };
      await trx.transaction(async () => {
        nested = { ...heldTransaction() };
      });
      afterwards = new Promise((resolve) => setTimeout(resolve, 20)).then(() => heldTransaction());
      return (await trx.raw('select 1 as one')).rows[0].one;
    });
    expect(answer).toBe(1);
    expect(inside).toEqual({ embedded: false, open: true });
    expect(nested).toEqual({ embedded: false, open: true });
    expect(await afterwards).toBeUndefined();
    expect(heldTransaction()).toBeUndefined();
    // A failed callback still rolls back and rejects as before.
    await expect(db.transaction(async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(heldTransaction()).toBeUndefined();
  });
});
