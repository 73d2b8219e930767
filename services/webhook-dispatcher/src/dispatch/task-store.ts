import { pruneProcessedMessages } from '@billstream/outbox';
import { rowsOf, type Conn } from '@billstream/db';
import { DeliveryStore, type DeliveryRecord } from '../deliveries/store';
import type { Envelope } from './envelope';

/** A due delivery task claimed by one worker, with what it needs to send. */
export interface ClaimedTask {
  endpointId: string;
  eventId: string;
  eventName: string;
  /** Attempts recorded so far. */
  attempts: number;
  claimId: string;
  url: string;
  secret: string;
  body: string;
  /** The W3C traceparent of the event (ADR 0020), when it came with one. */
  traceParent?: string;
}

/** The outcome of one attempt: its record, and the task's next state. */
export interface TaskResult {
  task: ClaimedTask;
  delivery: DeliveryRecord;
  status: 'pending' | 'succeeded' | 'failed';
  nextAttemptAt: Date | null;
}

export interface ClaimOptions {
  limit: number;
  endpointCap: number;
  /** Attempts this worker has in flight per endpoint; the claim fills each up to the cap. */
  inFlight: Record<string, number>;
  leaseMs: number;
  claimId: string;
}

/** Rows per multi-row insert. */
const CHUNK = 1000;

interface ClaimedRow {
  endpoint_id: string;
  event_id: string;
  attempts: number;
  event_name: string;
  body: string;
  url: string;
  secret: string;
  trace_parent: string | null;
}

/**
 * Delivery tasks: one per (endpoint, event), `pending` until an attempt succeeds or the
 * retry schedule is used up. A claim pushes `next_attempt_at` out by a lease, so a worker
 * that dies mid-delivery loses nothing: its tasks fall due again when the lease ends.
 * Stateless: every method takes the connection first. The queue spans tenants (the worker
 * serves them all); each task belongs to an endpoint, which has the scope.
 */
export class TaskStore {
  private readonly deliveries = new DeliveryStore();

  /**
   * Stores each envelope once and one pending task per enabled endpoint of its tenant and
   * environment subscribed to its name or to `*`; an envelope no endpoint wants is not
   * stored. A whole batch costs a few statements. Returns how many tasks were created.
   */
  async enqueue(conn: Conn, items: Array<{ envelope: Envelope; body: string; traceParent?: string }>): Promise<number> {
    if (items.length === 0) return 0;
    const scopes = [...new Set(items.map((i) => JSON.stringify([i.envelope.tenant_id, i.envelope.environment_id])))].map(
      (s) => JSON.parse(s) as [string, string],
    );
    const endpoints: Array<{ id: string; tenant_id: string; environment_id: string; events: string[] | string }> = await conn(
      'endpoints',
    )
      .where({ enabled: true })
      .whereIn(['tenant_id', 'environment_id'], scopes)
      .select('id', 'tenant_id', 'environment_id', 'events');
    const byScope = new Map<string, Array<{ id: string; events: Set<string> }>>();
    for (const e of endpoints) {
      const key = JSON.stringify([e.tenant_id, e.environment_id]);
      const events = new Set<string>(typeof e.events === 'string' ? JSON.parse(e.events) : e.events);
      byScope.set(key, [...(byScope.get(key) ?? []), { id: e.id, events }]);
    }
    const messages: Array<Record<string, string | null>> = [];
    const tasks: Array<Record<string, unknown>> = [];
    const now = new Date();
    for (const { envelope, body, traceParent } of items) {
      const targets = (byScope.get(JSON.stringify([envelope.tenant_id, envelope.environment_id])) ?? []).filter(
        (e) => e.events.has('*') || e.events.has(envelope.event_name),
      );
      if (targets.length === 0) continue;
      messages.push({
        id: envelope.id,
        tenant_id: envelope.tenant_id,
        environment_id: envelope.environment_id,
        event_name: envelope.event_name,
        body,
        trace_parent: traceParent ?? null,
      });
      for (const t of targets) tasks.push({ endpoint_id: t.id, event_id: envelope.id, status: 'pending', next_attempt_at: now });
    }
    let created = 0;
    for (let i = 0; i < messages.length; i += CHUNK) {
      await conn('messages').insert(messages.slice(i, i + CHUNK)).onConflict('id').ignore();
    }
    for (let i = 0; i < tasks.length; i += CHUNK) {
      const rows = await conn('tasks')
        .insert(tasks.slice(i, i + CHUNK))
        .onConflict(['endpoint_id', 'event_id'])
        .ignore()
        .returning('event_id');
      created += rows.length;
    }
    return created;
  }

  /**
   * Claims due tasks of enabled endpoints, at most `endpointCap` in flight per endpoint, the
   * oldest first. Rows locked by another worker are skipped (FOR UPDATE SKIP LOCKED).
   */
  async claim(conn: Conn, o: ClaimOptions): Promise<ClaimedTask[]> {
    const result = await conn.raw(
      `WITH picked AS (
         SELECT t.endpoint_id, t.event_id FROM endpoints e
         CROSS JOIN LATERAL (
           SELECT tasks.endpoint_id, tasks.event_id, tasks.next_attempt_at FROM tasks
           WHERE tasks.endpoint_id = e.id AND tasks.status = 'pending' AND tasks.next_attempt_at <= now()
           ORDER BY tasks.next_attempt_at
           LIMIT greatest(0, ?::int - coalesce((?::jsonb ->> e.id)::int, 0))
           FOR UPDATE OF tasks SKIP LOCKED
         ) t
         WHERE e.enabled
         ORDER BY t.next_attempt_at
         LIMIT ?
       )
       UPDATE tasks
       SET next_attempt_at = now() + (?::int * interval '1 millisecond'), claim_id = ?, updated_at = now()
       FROM picked, endpoints e, messages m
       WHERE tasks.endpoint_id = picked.endpoint_id AND tasks.event_id = picked.event_id
         AND e.id = tasks.endpoint_id AND m.id = tasks.event_id
       RETURNING tasks.endpoint_id, tasks.event_id, tasks.attempts, m.event_name, m.body, m.trace_parent, e.url, e.secret`,
      [o.endpointCap, JSON.stringify(o.inFlight), o.limit, o.leaseMs, o.claimId],
    );
    return rowsOf<ClaimedRow>(result).map((r) => ({
      endpointId: r.endpoint_id,
      eventId: r.event_id,
      eventName: r.event_name,
      attempts: r.attempts,
      claimId: o.claimId,
      url: r.url,
      secret: r.secret,
      body: r.body,
      ...(r.trace_parent ? { traceParent: r.trace_parent } : {}),
    }));
  }

  /**
   * Records attempts and moves their tasks on, in one transaction. A task whose claim was
   * taken over meanwhile (lease ended) or that was cancelled keeps its state; the attempt
   * is recorded all the same, since it happened.
   */
  async complete(conn: Conn, results: TaskResult[]): Promise<void> {
    if (results.length === 0) return;
    await conn.transaction(async (trx) => {
      await this.deliveries.insert(trx, results.map((r) => r.delivery));
      const values = results.map(() => '(?, ?, ?, ?::int, ?::timestamptz, ?)').join(', ');
      const bindings = results.flatMap((r) => [
        r.task.endpointId,
        r.task.eventId,
        r.task.claimId,
        r.delivery.attempt,
        r.nextAttemptAt,
        r.status,
      ]);
      await trx.raw(
        `UPDATE tasks
         SET status = v.status, attempts = v.attempt, claim_id = NULL, updated_at = now(),
             next_attempt_at = coalesce(v.next_at, tasks.next_attempt_at)
         FROM (VALUES ${values}) AS v(endpoint_id, event_id, claim_id, attempt, next_at, status)
         WHERE tasks.endpoint_id = v.endpoint_id AND tasks.event_id = v.event_id
           AND tasks.claim_id = v.claim_id AND tasks.status = 'pending'`,
        bindings,
      );
    });
  }

  /** Gives claimed tasks back at once (a worker stopping before it could send them). */
  async release(conn: Conn, tasks: ClaimedTask[]): Promise<void> {
    for (const t of tasks) {
      await conn('tasks')
        .where({ endpoint_id: t.endpointId, event_id: t.eventId, claim_id: t.claimId, status: 'pending' })
        .update({ next_attempt_at: conn.fn.now(), claim_id: null, updated_at: conn.fn.now() });
    }
  }

  /**
   * Deletes what is older than `before`: delivery records, finished tasks, and envelopes no
   * pending task needs any more. Returns how many rows of each went.
   */
  async prune(conn: Conn, before: Date): Promise<{ deliveries: number; tasks: number; messages: number; processed: number }> {
    const deliveries = await conn('deliveries').where('attempted_at', '<', before).delete();
    const tasks = await conn('tasks').whereNot({ status: 'pending' }).where('updated_at', '<', before).delete();
    const messages = await conn('messages')
      .where('created_at', '<', before)
      .whereNotExists(function pendingTask() {
        this.select(1).from('tasks').whereRaw('tasks.event_id = messages.id');
      })
      .delete();
    const processed = await pruneProcessedMessages(conn, before);
    return { deliveries, tasks, messages, processed };
  }

  /** Drops the planned attempts of an endpoint (it was disabled). */
  async cancelPending(conn: Conn, endpointId: string): Promise<void> {
    await conn('tasks')
      .where({ endpoint_id: endpointId, status: 'pending' })
      .update({ status: 'cancelled', claim_id: null, updated_at: conn.fn.now() });
  }
}
