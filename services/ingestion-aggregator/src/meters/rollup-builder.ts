import type { Db, Trx } from '@billstream/db';
import { rowsOf } from '@billstream/db';
import type { Logger } from '@billstream/logger';
import { PROJECTION_LOCK, scopeLockKey, scopeOf } from '../customers/lock';
import { METER_ACCEPTS, METERED_COLUMNS, ROLLUP_CTES } from './rollup-sql';
import type { Meter, MeterStore } from './store';

const DAY_MS = 86_400_000;

/** Rolls up one UTC day of a meter's stored events (its rows of that day deleted first). */
const BACKFILL_DAY = `
WITH metered AS (
  SELECT ${METERED_COLUMNS}
  FROM events s JOIN meters m ON m.id = ? AND m.tenant_id = s.tenant_id AND m.environment_id = s.environment_id AND m.event_name = s.event_name
  WHERE s.tenant_id = ? AND s.environment_id = ? AND s.event_name = ? AND s."timestamp" >= ? AND s."timestamp" < ?
    AND ${METER_ACCEPTS}
),${ROLLUP_CTES}
SELECT 1`;

/**
 * Builds the rollup of meters created after events of theirs were stored (docs/adr/0023), one
 * at a time, in the background: usage reads the events until the meter is marked ready.
 *
 * Why it is exact: every event batch holds its scope's lock shared (EventStore.storeBatch) and
 * rolls up for the meters its statement sees. The builder first takes the lock exclusively
 * once (a barrier: every batch that did not see the meter has committed; every later one sees
 * it), reads the scope's time span, then per UTC day, under the exclusive lock, deletes the
 * meter's rollup rows of the day and rolls up the day's stored events. Batches of that day
 * committed before it are replaced by the recount, later ones add to it.
 */
export class RollupBuilder {
  private readonly queue: string[] = [];
  private running: Promise<void> | undefined;
  private retry: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly db: Db,
    private readonly meters: MeterStore,
    private readonly logger: Logger,
    private readonly retryMs = 5_000,
  ) {}

  /** Queues the meters not built yet (after a restart, or existing before rollups). */
  async start(): Promise<void> {
    this.stopped = false;
    for (const id of await this.meters.rollupsPending(this.db)) this.schedule(id);
  }

  /** Builds the meter's rollup soon (after the ones queued before). */
  schedule(meterId: string): void {
    if (this.stopped || this.queue.includes(meterId)) return;
    this.queue.push(meterId);
    this.running ??= this.drain().finally(() => {
      this.running = undefined;
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retry) clearTimeout(this.retry);
    this.queue.splice(0);
    await this.running;
  }

  private async drain(): Promise<void> {
    for (let id = this.queue[0]; id !== undefined && !this.stopped; id = this.queue[0]) {
      try {
        await this.build(id);
        this.queue.shift();
      } catch (err) {
        this.logger.warn('could not build a meter usage rollup, retrying', { meter_id: id, err });
        this.queue.shift();
        this.retry = setTimeout(() => this.schedule(id), this.retryMs);
        this.retry.unref();
      }
    }
  }

  /** Builds one meter's rollup from its stored events and marks it ready (idempotent). */
  async build(meterId: string): Promise<void> {
    const meter = await this.meters.byId(this.db, meterId);
    if (!meter || meter.rollupReadyAt) return;
    const span = await this.underLock(meter, async (trx) =>
      rowsOf<{ first: Date | null; last: Date | null }>(
        await trx.raw('SELECT min("timestamp") AS first, max("timestamp") AS last FROM events WHERE tenant_id = ? AND environment_id = ?', [
          meter.tenantId,
          meter.environmentId,
        ]),
      )[0],
    );
    const started = Date.now();
    let days = 0;
    if (span?.first && span.last) {
      const last = new Date(span.last).getTime();
      for (let day = Math.floor(new Date(span.first).getTime() / DAY_MS) * DAY_MS; day <= last; day += DAY_MS) {
        if (this.stopped) return;
        await this.underLock(meter, (trx) => this.rollUpDay(trx, meter, new Date(day).toISOString(), new Date(day + DAY_MS).toISOString()));
        days += 1;
      }
    }
    await this.meters.markRollupReady(this.db, meter.id);
    this.logger.info('meter usage rollup built', { meter_id: meter.id, days, duration_ms: Date.now() - started });
  }

  private async rollUpDay(trx: Trx, meter: Meter, from: string, to: string): Promise<void> {
    const key = [meter.tenantId, meter.environmentId, meter.id, from, to];
    const where = 'tenant_id = ? AND environment_id = ? AND meter_id = ? AND bucket >= ? AND bucket < ?';
    await trx.raw(`DELETE FROM usage_rollups WHERE ${where}`, key);
    await trx.raw(`DELETE FROM usage_rollup_values WHERE ${where}`, key);
    await trx.raw(BACKFILL_DAY, [meter.id, meter.tenantId, meter.environmentId, meter.eventName, from, to]);
  }

  /** Runs `work` in a transaction holding the meter scope's lock exclusively (event batches of the scope wait). */
  private underLock<T>(meter: Meter, work: (trx: Trx) => Promise<T>): Promise<T> {
    return this.db.transaction(async (trx: Trx) => {
      await trx.raw('SELECT pg_advisory_xact_lock(?, ?)', [PROJECTION_LOCK, scopeLockKey(scopeOf(meter.tenantId, meter.environmentId))]);
      return work(trx);
    });
  }
}
