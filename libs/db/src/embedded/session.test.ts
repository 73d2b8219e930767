import type { PGlite } from '@electric-sql/pglite';
import { KnexTimeoutError } from 'knex';
import { searchPathSql, SharedSession } from './session';

/** A stand-in for PGlite that records the statements the session itself sends. */
function fakePglite(statements: string[]): PGlite {
  return { query: async (sql: string) => void statements.push(sql) } as unknown as PGlite;
}

const tick = () => new Promise((r) => setImmediate(r));

describe('SharedSession', () => {
  it('lends the session to one holder at a time, in arrival order', async () => {
    const session = new SharedSession(fakePglite([]));
    const path = searchPathSql(['a']);
    const order: string[] = [];
    await session.acquire(path, 1000);
    const second = session.acquire(path, 1000).then(() => order.push('second'));
    const third = session.acquire(path, 1000).then(() => order.push('third'));
    await tick();
    expect(order).toEqual([]);
    expect(session.waiting).toBe(2);
    session.release();
    await second;
    await tick();
    expect(order).toEqual(['second']);
    session.release();
    await third;
    expect(order).toEqual(['second', 'third']);
    session.release();
    expect(session.waiting).toBe(0);
  });

  it('sets the search path only when the previous holder had another one', async () => {
    const statements: string[] = [];
    const session = new SharedSession(fakePglite(statements));
    for (const schema of ['wallet', 'wallet', 'customer', 'wallet']) {
      await session.acquire(searchPathSql([schema, 'public']), 1000);
      session.release();
    }
    expect(statements).toEqual([
      'SET search_path TO "wallet", "public"',
      'SET search_path TO "customer", "public"',
      'SET search_path TO "wallet", "public"',
    ]);
  });

  it('quotes schema names', () => {
    expect(searchPathSql(['we"ird', 'public'])).toBe('SET search_path TO "we""ird", "public"');
  });

  it('ends a wait that outlasts the timeout with a KnexTimeoutError, and the line moves on', async () => {
    const session = new SharedSession(fakePglite([]));
    const path = searchPathSql(['a']);
    await session.acquire(path, 1000);
    const waiter = session.acquire(path, 20);
    await expect(waiter).rejects.toBeInstanceOf(KnexTimeoutError);
    await expect(waiter).rejects.toThrow(/waiting for another database call/);
    expect(session.waiting).toBe(0);
    const next = session.acquire(path, 1000);
    session.release();
    await expect(next).resolves.toBeDefined();
    session.release();
  });

  it('gives the session back when setting the search path fails', async () => {
    let fail = true;
    const pglite = {
      query: async () => {
        if (fail) throw new Error('no such schema');
      },
    } as unknown as PGlite;
    const session = new SharedSession(pglite);
    await expect(session.acquire(searchPathSql(['a']), 1000)).rejects.toThrow('no such schema');
    fail = false;
    await expect(session.acquire(searchPathSql(['a']), 50)).resolves.toBe(pglite);
    session.release();
  });

  it('lets the event loop run between the steps of a chain of queries that never waits for I/O', async () => {
    // A stand-in for PGlite: each query keeps the thread 2 ms and answers without I/O, as PGlite does.
    const busy = { query: async () => {
      const until = performance.now() + 2;
      while (performance.now() < until);
    } } as unknown as PGlite;
    const session = new SharedSession(busy, 10);
    const path = searchPathSql(['a']);
    let steps = 0;
    // A long job: 200 steps of 2 ms, each taking and giving back the session.
    const job = (async () => {
      for (let i = 0; i < 200; i += 1) {
        const db = await session.acquire(path, 1000);
        await db.query('step');
        session.release();
        steps += 1;
      }
    })();
    // A request arriving meanwhile (a timer, as a socket's callback would): it gets in long before the job ends.
    const request = new Promise<number>((resolve) => setTimeout(() => resolve(steps), 5));
    const stepsBefore = await request;
    expect(stepsBefore).toBeLessThan(50);
    await job;
    expect(steps).toBe(200);
  });

  it('does not yield while the event loop turned within the slice', async () => {
    const session = new SharedSession(fakePglite([]), 60_000);
    const path = searchPathSql(['a']);
    let ticked = false;
    setImmediate(() => (ticked = true));
    for (let i = 0; i < 100; i += 1) {
      await session.acquire(path, 1000);
      session.release();
    }
    expect(ticked).toBe(false);
    await tick();
    expect(ticked).toBe(true);
  });
});
