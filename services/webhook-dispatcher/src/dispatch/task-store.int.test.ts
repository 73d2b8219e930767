import type { WebhookEventName } from '@billstream/contracts';
import type { Db } from '@billstream/db';
import { newId, newUlid } from '@billstream/ids';
import { createTestDatabase, migratedDb, sleep, type TestDatabase } from '@billstream/testing';
import { EndpointStore } from '../endpoints/store';
import { migrations, SCHEMA } from '../migrations';
import { envelopeOf, serializeEnvelope, type Envelope } from './envelope';
import { TaskStore, type ClaimedTask, type ClaimOptions } from './task-store';
import { resultOf } from './worker';

describe('TaskStore (real Postgres)', () => {
  let database: TestDatabase;
  let db: Db;
  const scope = { tenantId: 'tenant-a', environmentId: 'production' };

  beforeAll(async () => {
    database = await createTestDatabase();
    db = await migratedDb(database.url, SCHEMA, migrations, 20);
  });
  afterAll(async () => {
    await db?.destroy();
    await database?.drop();
  });

  const tasks = new TaskStore();
  const addEndpoint = (events: string[], enabled = true) =>
    new EndpointStore().insert(db, { id: newId('webhookEndpoint'), ...scope, url: 'https://hooks.example.com/', events, enabled, description: null, secret: 'whsec_x' });
  const enqueue = async (type: WebhookEventName, n: number) => {
    const ids: string[] = [];
    for (let i = 0; i < n; i += 1) {
      const envelope = envelopeOf({ id: newId('event'), type, tenant_id: scope.tenantId, environment_id: scope.environmentId, user_id: 'key_1', occurred_at: new Date().toISOString(), payload: {} });
      await tasks.enqueue(db, [{ envelope, body: serializeEnvelope(envelope) }]);
      ids.push(envelope.id);
    }
    return ids;
  };
  const claim = (o: Partial<ClaimOptions> = {}) =>
    tasks.claim(db, { limit: 1000, endpointCap: 1000, inFlight: {}, leaseMs: 60_000, claimId: newUlid(), ...o });
  const clear = () => db('tasks').delete();

  it('enqueues one task per matching enabled endpoint, once per event', async () => {
    const named = await addEndpoint(['customer.created']);
    const star = await addEndpoint(['*']);
    await addEndpoint(['*'], false);
    const [id] = await enqueue('customer.created', 1);
    await enqueue('customer.updated', 1);
    const envelope: Envelope = { id, event_name: 'customer.created', tenant_id: scope.tenantId, environment_id: scope.environmentId, user_id: 'k', timestamp: '', payload: {} };
    expect(await tasks.enqueue(db, [{ envelope, body: '{}' }])).toBe(0);
    const rows = await db('tasks').select('endpoint_id', 'event_id').orderBy('event_id');
    expect(rows).toHaveLength(3);
    expect(rows.filter((r) => r.event_id === id).map((r) => r.endpoint_id).sort()).toEqual([named.id, star.id].sort());
    await db('endpoints').delete();
  });

  it('never hands one task to two concurrent claimers (FOR UPDATE SKIP LOCKED)', async () => {
    await addEndpoint(['*']);
    await addEndpoint(['*']);
    await enqueue('wallet.created', 300);
    const claimedBy = await Promise.all(
      Array.from({ length: 6 }, async () => {
        const mine: ClaimedTask[] = [];
        for (;;) {
          const got = await claim({ limit: 17 });
          if (got.length === 0) return mine;
          mine.push(...got);
        }
      }),
    );
    const all = claimedBy.flat().map((t) => `${t.endpointId}/${t.eventId}`);
    expect(all).toHaveLength(600);
    expect(new Set(all).size).toBe(600);
    expect(claimedBy.filter((c) => c.length > 0).length).toBeGreaterThan(1);
    await clear();
  });

  it('fills each endpoint only up to its cap, counting what is in flight', async () => {
    await db('endpoints').delete();
    const a = await addEndpoint(['*']);
    const b = await addEndpoint(['*']);
    await enqueue('wallet.updated', 10);
    const got = await claim({ endpointCap: 3, inFlight: { [a.id]: 2 } });
    const per = (id: string) => got.filter((t) => t.endpointId === id).length;
    expect([per(a.id), per(b.id)]).toEqual([1, 3]);
    expect(await claim({ endpointCap: 3, inFlight: { [a.id]: 3, [b.id]: 3 } })).toEqual([]);
    await clear();
  });

  it('gives a claim back when its lease ends, and ignores a late result of a lost claim', async () => {
    await db('endpoints').delete();
    await addEndpoint(['*']);
    await enqueue('customer.deleted', 1);
    const [first] = await claim({ leaseMs: 300 });
    expect(await claim()).toEqual([]);
    await sleep(400);
    const [again] = await claim({ leaseMs: 60_000 });
    expect(again.eventId).toBe(first.eventId);
    const done = { kind: 'done' as const, ok: true, responseCode: 200, error: null, durationMs: 5, attemptedAt: new Date() };
    await tasks.complete(db, [resultOf(first, done, [1000], new Date())]);
    expect((await db('tasks').first()).status).toBe('pending');
    await tasks.complete(db, [resultOf(again, done, [1000], new Date())]);
    const task = await db('tasks').first();
    expect(task).toMatchObject({ status: 'succeeded', attempts: 1, claim_id: null });
    expect(await db('deliveries').count({ n: '*' })).toEqual([{ n: 2 }]);
    await clear();
    await db('deliveries').delete();
  });

  it('plans a failed attempt for later and cancels what a disabled endpoint had pending', async () => {
    await db('endpoints').delete();
    const e = await addEndpoint(['*']);
    await enqueue('wallet.terminated', 2);
    const [t1, t2] = await claim();
    const failed = { kind: 'done' as const, ok: false, responseCode: 500, error: 'endpoint answered HTTP 500', durationMs: 5, attemptedAt: new Date() };
    await tasks.complete(db, [resultOf(t1, failed, [60_000], new Date()), resultOf(t2, failed, [60_000], new Date())]);
    const rows = await db('tasks').select('*');
    expect(rows.map((r) => [r.status, r.attempts])).toEqual([
      ['pending', 1],
      ['pending', 1],
    ]);
    expect(new Date(rows[0].next_attempt_at).getTime()).toBeGreaterThan(Date.now() + 50_000);
    expect(await claim()).toEqual([]);
    await tasks.cancelPending(db, e.id);
    expect((await db('tasks').select('status')).map((r) => r.status)).toEqual(['cancelled', 'cancelled']);
  });

  it('prunes old delivery records, finished tasks and unneeded envelopes, and keeps what is pending', async () => {
    await db('endpoints').delete();
    await db('tasks').delete();
    await db('deliveries').delete();
    await db('messages').delete();
    await addEndpoint(['*']);
    const [oldDone, oldPending, fresh] = await enqueue('customer.updated', 3);
    const longAgo = new Date(Date.now() - 40 * 86_400_000);
    await db('messages').update({ created_at: longAgo });
    await db('tasks').where({ event_id: oldDone }).update({ status: 'succeeded', updated_at: longAgo });
    await db('tasks').where({ event_id: oldPending }).update({ updated_at: longAgo });
    await db('tasks').where({ event_id: fresh }).update({ status: 'succeeded' });
    const [t] = await claim();
    const done = { kind: 'done' as const, ok: false, responseCode: 500, error: 'x', durationMs: 1, attemptedAt: longAgo };
    await tasks.complete(db, [resultOf(t, done, [60_000], new Date())]);
    await db('processed_messages').delete();
    await db('processed_messages').insert([
      { consumer_group: 'g', message_id: 'evt_old', processed_at: longAgo },
      { consumer_group: 'g', message_id: 'evt_recent' },
    ]);
    const deleted = await tasks.prune(db, new Date(Date.now() - 30 * 86_400_000));
    expect(deleted).toEqual({ deliveries: 1, tasks: 1, messages: 1, processed: 1 });
    expect((await db('processed_messages').select('message_id')).map((r) => r.message_id)).toEqual(['evt_recent']);
    expect((await db('messages').select('id')).map((r) => r.id).sort()).toEqual([oldPending, fresh].sort());
    expect((await db('tasks').select('event_id')).map((r) => r.event_id).sort()).toEqual([oldPending, fresh].sort());
  });
});
