import type { Db, Trx } from '@billstream/db';
import { rowsOf } from '@billstream/db';
import type { Logger } from '@billstream/logger';
import { PROJECTION_LOCK, scopeLockKey, scopeOf } from '../customers/lock';
import { HOUR_BIT, MONTH_HOURS, MONTH_OF, meteredSql, ROLLUP_CTES } from './rollup-sql';
import type { Meter, MeterStore } from './store';

const DAY_MS = 86_400_000;
/** How long a first scheduled meter waits for others to build with it. */
const GATHER_MS = 200;

/**
 * Rolls up one UTC day of the stored events of some series of one scope (their rows of that day
 * deleted first), for every meter of those series (a series' rows serve them all).
 */
const BACKFILL_DAY = `
WITH metered AS (${meteredSql('events', 'm.rollup_series = ANY(?::text[])', 's.tenant_id = ? AND s.environment_id = ? AND s.event_name = ANY(?::text[]) AND s."timestamp" >= ? AND s."timestamp" < ?')}
),${ROLLUP_CTES}
SELECT 1`;

/**
 * Clears the bits of one UTC day's hours [?, ?) in the UNIQUE_COUNT month bitmaps of some series
 * (the day is recounted next); `DROP_EMPTY_MONTHS` then drops the rows left with no bit.
 */
const CLEAR_DAY_BITS = `
UPDATE usage_rollup_value_months u SET hours = u.hours & ~d.mask
FROM (SELECT bit_or(${HOUR_BIT('g', MONTH_OF('g'))}) AS mask
  FROM generate_series(?::timestamptz, ?::timestamptz - interval '1 hour', interval '1 hour') g) d
WHERE u.series = ANY(?::text[]) AND u.month = ${MONTH_OF('?::timestamptz')} AND (u.hours & d.mask) <> B'0'::bit(${MONTH_HOURS})`;
const DROP_EMPTY_MONTHS = `DELETE FROM usage_rollup_value_months WHERE series = ANY(?::text[]) AND month = ${MONTH_OF('?::timestamptz')} AND hours = B'0'::bit(${MONTH_HOURS})`;

/**
 * Builds the rollup of meters created after events of theirs were stored (docs/adr/0023), in
 * the background, the meters queued together in one pass over their scope's events: usage
 * reads the events until the meter is marked ready.
 *
 * Why it is exact: every event batch holds its scope's lock shared (EventStore.storeBatch) and
 * rolls up for the meters its statement sees. The builder first takes the lock exclusively
 * once (a barrier: every batch that did not see the meter has committed; every later one sees
 * it), reads the scope's time span, then per UTC day, under the exclusive lock, deletes the
 * meter's rollup rows of the day (hour and minute rows, the day's bits of the month bitmaps,
 * the day's hour bitmaps) and rolls up the day's stored events. Batches of that day
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
    // Meters created together (a script, a migration's existing ones) are built in one pass.
    await new Promise((resolve) => setTimeout(resolve, GATHER_MS));
    while (this.queue.length > 0 && !this.stopped) {
      const ids = this.queue.splice(0);
      try {
        await this.build(ids);
      } catch (err) {
        this.logger.warn('could not build meter usage rollups, retrying', { meter_ids: ids, err });
        this.retry = setTimeout(() => ids.forEach((id) => this.schedule(id)), this.retryMs);
        this.retry.unref();
      }
    }
  }

  /**
   * Builds these meters' rollups from their stored events and marks them ready (idempotent). A
   * meter whose series already serves a ready meter needing the same rows is ready at once.
   */
  async build(meterIds: string[]): Promise<void> {
    const scopes = new Map<string, Meter[]>();
    for (const id of meterIds) {
      const meter = await this.meters.byId(this.db, id);
      if (!meter || meter.rollupReadyAt) continue;
      if (await this.meters.seriesReadyFor(this.db, meter)) {
        await this.meters.markRollupReady(this.db, meter.id);
        continue;
      }
      const key = scopeOf(meter.tenantId, meter.environmentId);
      scopes.set(key, [...(scopes.get(key) ?? []), meter]);
    }
    for (const [scope, meters] of scopes) await this.buildScope(scope, meters);
  }

  private async buildScope(scope: string, meters: Meter[]): Promise<void> {
    const { tenantId, environmentId } = meters[0];
    const span = await this.underLock(scope, async (trx) =>
      rowsOf<{ first: Date | null; last: Date | null }>(
        await trx.raw('SELECT min("timestamp") AS first, max("timestamp") AS last FROM events WHERE tenant_id = ? AND environment_id = ?', [tenantId, environmentId]),
      )[0],
    );
    const started = Date.now();
    const ids = meters.map((m) => m.id);
    const series = [...new Set(meters.map((m) => m.rollupSeries))];
    const names = [...new Set(meters.map((m) => m.eventName))];
    let days = 0;
    if (span?.first && span.last) {
      const last = new Date(span.last).getTime();
      for (let day = Math.floor(new Date(span.first).getTime() / DAY_MS) * DAY_MS; day <= last; day += DAY_MS) {
        if (this.stopped) return;
        const [from, to] = [new Date(day).toISOString(), new Date(day + DAY_MS).toISOString()];
        await this.underLock(scope, async (trx) => {
          const where = 'series = ANY(?::text[]) AND bucket >= ? AND bucket < ?';
          await trx.raw(`DELETE FROM usage_rollups WHERE ${where}`, [series, from, to]);
          await trx.raw(`DELETE FROM usage_rollup_minutes WHERE ${where}`, [series, from, to]);
          await trx.raw('DELETE FROM usage_rollup_value_hours WHERE series = ANY(?::text[]) AND hour >= ? AND hour < ?', [series, from, to]);
          await trx.raw(CLEAR_DAY_BITS, [from, to, series, from]);
          await trx.raw(DROP_EMPTY_MONTHS, [series, from]);
          await trx.raw(BACKFILL_DAY, [series, tenantId, environmentId, names, from, to]);
        });
        days += 1;
      }
    }
    for (const id of ids) await this.meters.markRollupReady(this.db, id);
    this.logger.info('meter usage rollups built', { meter_ids: ids, days, duration_ms: Date.now() - started });
  }

  /** Runs `work` in a transaction holding the scope's lock exclusively (event batches of the scope wait). */
  private underLock<T>(scope: string, work: (trx: Trx) => Promise<T>): Promise<T> {
    return this.db.transaction(async (trx: Trx) => {
      await trx.raw('SELECT pg_advisory_xact_lock(?, ?)', [PROJECTION_LOCK, scopeLockKey(scope)]);
      return work(trx);
    });
  }
}
