import type { Bus, OutgoingMessage } from '@billstream/bus';
import { isEmbedded, type Db, rowsOf } from '@billstream/db';
import type { Logger } from '@billstream/logger';
import { addOutboxBacklogSource, addOutboxOldestSource, metricsEnabled, recordOutboxPublished } from '@billstream/observability';
import { pruneProcessedMessages } from './idempotent-consumer';

export interface OutboxRelayOptions {
  db: Db;
  schema: string;
  bus: Bus;
  logger: Logger;
  batchSize?: number;
  /** Poll interval when idle; `nudge()` wakes the relay at once. */
  idleMs?: number;
  /**
   * When commits keep nudging, rounds start at least this far apart: events wait up to this
   * long, rounds carry more rows and cost the database fewer statements per event.
   */
  coalesceMs?: number;
  /**
   * Longest pause after failed rounds (they back off 400 ms, 800 ms, then this): rows written
   * during a broker outage go out within about this long after the broker is back. Default 1 s.
   */
  maxRetryDelayMs?: number;
  /** Published rows are deleted after this long. */
  retentionMs?: number;
  /** Ids of consumed messages (processed_messages of this schema) are kept this long. */
  processedRetentionMs?: number;
}

interface OutboxRow {
  seq: number;
  topic: string;
  message_key: string;
  value: string;
  headers: Record<string, string> | string;
  created_at: Date | string;
}

/**
 * Publishes outbox rows in sequence order and marks them, in one transaction guarded by an
 * advisory lock, so that one relay per schema runs at a time across replicas. A crash
 * between publish and mark republishes (at least once); consumers deduplicate. On the
 * embedded database no transaction is held while publishing (see embeddedRound).
 */
export class OutboxRelay {
  private running = false;
  private loop?: Promise<void>;
  private wake?: () => void;
  private pending = false;
  /** In the pause between two rounds of a stream of commits: nudges wait for its end. */
  private coalescing = false;
  private coalesceTimer?: NodeJS.Timeout;
  private lastRoundAt = 0;
  private lastCleanup = 0;
  /** The last round on the embedded database: the next one starts after it. */
  private round: Promise<unknown> = Promise.resolve();
  private readonly batchSize: number;
  private readonly idleMs: number;
  private readonly coalesceMs: number;
  private readonly maxRetryDelayMs: number;
  private readonly retentionMs: number;
  private readonly processedRetentionMs: number;
  private removeGauges: Array<() => void> = [];

  constructor(private readonly options: OutboxRelayOptions) {
    this.batchSize = options.batchSize ?? 500;
    this.idleMs = options.idleMs ?? 250;
    this.coalesceMs = options.coalesceMs ?? 10;
    this.maxRetryDelayMs = options.maxRetryDelayMs ?? 1000;
    this.retentionMs = options.retentionMs ?? 24 * 3600 * 1000;
    this.processedRetentionMs = options.processedRetentionMs ?? 14 * 24 * 3600 * 1000;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.removeGauges = [addOutboxBacklogSource(() => this.backlog('count')), addOutboxOldestSource(() => this.backlog('age'))];
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.removeGauges.forEach((remove) => remove());
    this.removeGauges = [];
    this.wake?.();
    await this.loop;
  }

  /**
   * Asks for a publish round (called after a commit that wrote outbox rows): at once when
   * the relay is idle; after the current pause when it is coalescing a stream of commits.
   */
  nudge(): void {
    this.pending = true;
    if (!this.wake || this.coalescing) return;
    const wait = this.lastRoundAt + this.coalesceMs - Date.now();
    if (wait <= 0) {
      this.wake();
      return;
    }
    // The last round was a moment ago: the next one waits for the rest of the pause.
    this.coalescing = true;
    this.coalesceTimer = setTimeout(() => this.wake?.(), wait);
    this.coalesceTimer.unref?.();
  }

  /**
   * One round: publishes up to a batch and returns how many rows it published. `nudged`:
   * a commit announced rows, so the round skips its probe.
   */
  async runOnce(nudged = false): Promise<number> {
    if (!isEmbedded(this.options.db)) return this.lockedRound(nudged);
    // One round at a time: on the embedded database the advisory lock is not held while publishing.
    const round = this.round.then(() => this.embeddedRound());
    this.round = round.catch(() => undefined);
    return round;
  }

  /** Reads, publishes and marks in one transaction guarded by the advisory lock. */
  private async lockedRound(nudged: boolean): Promise<number> {
    const { db, schema } = this.options;
    // Idle rounds cost one indexed read, not a transaction.
    if (!nudged && !(await db('outbox').whereNull('published_at').first('seq'))) return 0;
    return db.transaction(async (trx) => {
      // The advisory lock and the read in one statement: no rows when another replica relays.
      const rows = rowsOf<OutboxRow>(
        await trx.raw(
          `WITH relay_lock AS (SELECT pg_try_advisory_xact_lock(hashtext(?)) AS ok)
           SELECT o.seq, o.topic, o.message_key, o.value, o.headers, o.created_at
             FROM outbox o, relay_lock
            WHERE relay_lock.ok AND o.published_at IS NULL
            ORDER BY o.seq
            LIMIT ?`,
          [`${schema}.outbox`, this.batchSize],
        ),
      );
      if (rows.length === 0) return 0;
      await this.publish(rows);
      await this.markPublished(trx, rows);
      return rows.length;
    });
  }

  /**
   * The embedded database: the services of the process share its one session, and the
   * in-process bus runs the other services' consumers inside `publish`. A transaction held
   * across it would make them wait for it while it waits for them, so the read, the publish
   * and the mark are separate steps. The database belongs to this one process, and its one
   * relay per schema runs one round at a time, so there is no other relay to lock out; a
   * crash between publish and mark republishes, as above.
   */
  private async embeddedRound(): Promise<number> {
    const { db } = this.options;
    const rows: OutboxRow[] = await db('outbox')
      .whereNull('published_at')
      .orderBy('seq')
      .limit(this.batchSize)
      .select('seq', 'topic', 'message_key', 'value', 'headers', 'created_at');
    if (rows.length === 0) return 0;
    await this.publish(rows);
    await this.markPublished(db, rows);
    return rows.length;
  }

  private async publish(rows: OutboxRow[]): Promise<void> {
    const byTopic = new Map<string, OutgoingMessage[]>();
    for (const row of rows) {
      const headers = typeof row.headers === 'string' ? JSON.parse(row.headers) : row.headers;
      const list = byTopic.get(row.topic) ?? [];
      list.push({ key: row.message_key, value: row.value, headers });
      byTopic.set(row.topic, list);
    }
    for (const [topic, messages] of byTopic) await this.options.bus.publish(topic, messages);
    if (metricsEnabled()) {
      const now = Date.now();
      recordOutboxPublished(
        this.options.schema,
        rows.map((r) => (now - new Date(r.created_at).getTime()) / 1000),
      );
    }
  }

  private async markPublished(db: Db, rows: OutboxRow[]): Promise<void> {
    await db('outbox')
      .whereIn(
        'seq',
        rows.map((r) => r.seq),
      )
      .update({ published_at: db.fn.now() });
  }

  /**
   * The unpublished rows (count) or the age of the oldest in seconds (age), for the
   * `billstream_outbox_*` gauges at a scrape: one read of the partial index of unpublished rows.
   */
  private async backlog(what: 'count' | 'age'): Promise<Array<{ labels: Record<string, string>; value: number }>> {
    const row = (await this.options.db('outbox')
      .whereNull('published_at')
      .first(this.options.db.raw('count(*)::int AS n'), this.options.db.raw('min(created_at) AS oldest'))) as
      | { n: number | string; oldest: Date | string | null }
      | undefined;
    const labels = { schema: this.options.schema };
    if (what === 'count') return [{ labels, value: Number(row?.n ?? 0) }];
    const oldest = row?.oldest ? new Date(row.oldest).getTime() : undefined;
    return [{ labels, value: oldest === undefined ? 0 : Math.max(0, (Date.now() - oldest) / 1000) }];
  }

  private async cleanup(): Promise<void> {
    if (Date.now() - this.lastCleanup < 60_000) return;
    this.lastCleanup = Date.now();
    const cutoff = new Date(Date.now() - this.retentionMs);
    await this.options.db('outbox').whereNotNull('published_at').where('published_at', '<', cutoff).delete();
    await pruneProcessedMessages(this.options.db, new Date(Date.now() - this.processedRetentionMs));
  }

  private async run(): Promise<void> {
    const { logger } = this.options;
    let failures = 0;
    while (this.running) {
      const nudged = this.pending && failures === 0;
      this.pending = false;
      this.lastRoundAt = Date.now();
      try {
        const published = await this.runOnce(nudged);
        failures = 0;
        if (published >= this.batchSize) continue;
        await this.cleanup();
      } catch (err) {
        failures += 1;
        logger.warn('outbox relay round failed; will retry', { schema: this.options.schema, err });
      }
      if (!this.running) break;
      // Under a stream of commits, rounds start at most every coalesceMs: fewer, larger rounds.
      const pause = this.lastRoundAt + this.coalesceMs - Date.now();
      if (this.pending && failures === 0 && pause <= 0) continue;
      this.coalescing = failures === 0 && this.pending;
      const delay = failures > 0 ? Math.min(this.maxRetryDelayMs, 200 * 2 ** failures) : this.coalescing ? pause : this.idleMs;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delay);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
      this.coalescing = false;
      clearTimeout(this.coalesceTimer);
    }
  }
}
