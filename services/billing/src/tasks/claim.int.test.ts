import { createTestDatabase, migratedDb, testLogger, type TestDatabase } from '@billstream/testing';
import type { Db } from '@billstream/db';
import { newId } from '@billstream/ids';
import { migrations, SCHEMA } from '../migrations';
import { TaskRunner } from './runner';
import { TaskStore } from './store';

/**
 * The claim of tasks on real Postgres: many runners claiming at once (two pools, as two
 * replicas) never take the same task; a running task is claimed again only once its lease ran
 * out, and its old runner can then no longer advance or finish it.
 */
describe('task claims (real Postgres)', () => {
  let database: TestDatabase;
  let a: Db;
  let b: Db;
  const store = new TaskStore();
  const scope = { tenant_id: 't', environment_id: 'e' };

  beforeAll(async () => {
    database = await createTestDatabase();
    a = await migratedDb(database.url, SCHEMA, migrations, 8);
    b = await migratedDb(database.url, SCHEMA, migrations, 8);
  });
  afterAll(async () => {
    await a?.destroy();
    await b?.destroy();
    await database?.drop();
  });

  const create = (n: number) =>
    Promise.all(
      Array.from({ length: n }, () =>
        store.insert(a, { id: newId('task'), ...scope, task_type: 'EXPORT', entity_type: 'EVENTS', file_type: 'CSV', filters: {}, created_by: 'test', now: new Date() }),
      ),
    );

  it('16 runners on two pools claiming 40 tasks at once take each exactly once', async () => {
    await create(40);
    const claimed: string[] = [];
    await Promise.all(
      Array.from({ length: 16 }, async (_, r) => {
        const db = r % 2 ? a : b;
        for (;;) {
          const t = await store.claim(db, `runner-${r}`, new Date(), 60_000);
          if (!t) return;
          claimed.push(t.id);
        }
      }),
    );
    expect(claimed).toHaveLength(40);
    expect(new Set(claimed).size).toBe(40);
    const rows = await a('tasks').select('attempts', 'task_status');
    for (const r of rows) expect(r).toEqual({ attempts: 1, task_status: 'PROCESSING' });
  });

  it('takes a running task again only after its lease; the old runner is then refused', async () => {
    await a('tasks').delete();
    const [task] = await create(1);
    const now = new Date();
    const first = await store.claim(a, 'old', now, 1000);
    expect(first?.id).toBe(task.id);
    expect(await store.claim(b, 'new', new Date(now.getTime() + 500), 1000)).toBeUndefined();
    const again = await store.claim(b, 'new', new Date(now.getTime() + 1500), 1000);
    expect(again).toMatchObject({ id: task.id, attempts: 2, claimed_by: 'new' });
    const progress = { processed: 1, successful: 1, failed: 0, errors: [], checkpoint: { cursor: null }, output: Buffer.from('x') };
    expect(await a.transaction((trx) => store.advance(trx, first!, 'old', progress, new Date(), 1000, 100))).toBe(false);
    expect(await store.finish(a, task.id, 'old', 'COMPLETED', null, new Date())).toBe(false);
    expect(await b.transaction((trx) => store.advance(trx, again!, 'new', progress, new Date(), 1000, 100))).toBe(true);
    expect(await store.finish(b, task.id, 'new', 'COMPLETED', null, new Date())).toBe(true);
    expect(await a('tasks').where({ id: task.id }).first()).toMatchObject({ task_status: 'COMPLETED', processed_records: 1, total_records: 1, chunks: 1 });
  });

  it('fails a task clearly once its runs were interrupted maxAttempts times, instead of running it again', async () => {
    await a('tasks').delete();
    const [task] = await create(1);
    // Five runs claimed it and died (their leases ran out).
    await a('tasks').where({ id: task.id }).update({ task_status: 'PROCESSING', attempts: 5, claimed_by: 'dead', lease_until: new Date(Date.now() - 1000) });
    const runner = new TaskRunner({
      db: a,
      store,
      exports: {} as never,
      imports: {},
      logger: testLogger('tasks'),
      clock: () => new Date(),
      settings: { pollMs: 100, leaseMs: 1000, maxAttempts: 5 },
    });
    const claimed = await store.claim(a, runner.worker, new Date(), 1000);
    expect(claimed?.attempts).toBe(6);
    await runner.runOne(claimed!);
    expect(await a('tasks').where({ id: task.id }).first()).toMatchObject({
      task_status: 'FAILED',
      error_summary: expect.stringMatching(/interrupted 5 times/),
      completed_at: expect.any(Date),
    });
  });
});
