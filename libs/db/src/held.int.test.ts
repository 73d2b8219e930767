import { heldTransaction } from '@billstream/observability';
import { createDb, type Db } from './index';

describe('transactions marked as held (ADR 0055, real Postgres)', () => {
  let db: Db;

  // Only `select 1`: the local database itself (DATABASE_URL, else the local one) is enough.
  beforeAll(() => {
    db = createDb({ databaseUrl: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres', schema: 'public' });
  });
  afterAll(async () => {
    await db?.destroy();
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
