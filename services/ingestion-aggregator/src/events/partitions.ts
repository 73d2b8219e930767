import type { Db } from '@billstream/db';
import { rowsOf } from '@billstream/db';
import type { Logger } from '@billstream/logger';

/** A month of event time, `YYYY-MM`. */
export type MonthKey = string;

const PARTITION_LOCK = 0x6576_7473; // 'evts': serialises partition creation across replicas

export function monthOf(timestamp: string): MonthKey {
  return timestamp.slice(0, 7);
}

export function partitionName(month: MonthKey): string {
  return `events_y${month.slice(0, 4)}m${month.slice(5, 7)}`;
}

export function monthBounds(month: MonthKey): { from: string; to: string } {
  const year = Number(month.slice(0, 4));
  const m = Number(month.slice(5, 7));
  const next = m === 12 ? `${year + 1}-01` : `${year}-${String(m + 1).padStart(2, '0')}`;
  return { from: `${month}-01T00:00:00Z`, to: `${next}-01T00:00:00Z` };
}

/** The month keys from `offset` months before `now`'s month to `ahead` months after it. */
export function monthsAround(now: Date, behind: number, ahead: number): MonthKey[] {
  const out: MonthKey[] = [];
  for (let i = -behind; i <= ahead; i += 1) {
    const d = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + i, 1));
    out.push(d.toISOString().slice(0, 7));
  }
  return out;
}

/**
 * Keeps one range partition of `events` per month of event time. Months are created ahead
 * (the current month, one behind and `monthsAhead` ahead, at start and every hour) and on
 * demand before a batch with other months (backfill, future timestamps) is stored. A month
 * whose rows already sit in the default partition is moved out of it when its partition is made.
 */
export class EventPartitions {
  private readonly known = new Set<MonthKey>();

  constructor(
    private readonly db: Db,
    private readonly logger: Logger,
    private readonly monthsAhead = 2,
  ) {}

  async load(): Promise<void> {
    const rows = rowsOf<{ name: string }>(
      await this.db.raw(`
        SELECT c.relname AS name FROM pg_inherits i
        JOIN pg_class c ON c.oid = i.inhrelid
        JOIN pg_class p ON p.oid = i.inhparent
        JOIN pg_namespace n ON n.oid = p.relnamespace
        WHERE p.relname = 'events' AND n.nspname = current_schema()`),
    );
    for (const { name } of rows) {
      const m = /^events_y(\d{4})m(\d{2})$/.exec(name);
      if (m) this.known.add(`${m[1]}-${m[2]}`);
    }
  }

  async ensureAhead(now = new Date()): Promise<void> {
    await this.ensure(monthsAround(now, 1, this.monthsAhead));
  }

  /** Makes sure every month of these timestamps has its partition. */
  async ensureFor(timestamps: Iterable<string>): Promise<void> {
    const months = new Set<MonthKey>();
    for (const t of timestamps) {
      const month = monthOf(t);
      if (!this.known.has(month)) months.add(month);
    }
    if (months.size > 0) await this.ensure([...months]);
  }

  private async ensure(months: MonthKey[]): Promise<void> {
    for (const month of months) {
      if (this.known.has(month)) continue;
      await this.create(month);
      this.known.add(month);
    }
  }

  private async create(month: MonthKey): Promise<void> {
    const name = partitionName(month);
    const { from, to } = monthBounds(month);
    await this.db.transaction(async (trx) => {
      await trx.raw('SELECT pg_advisory_xact_lock(?, hashtext(current_schema()))', [PARTITION_LOCK]);
      const exists = rowsOf(await trx.raw('SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relname = ? AND n.nspname = current_schema()', [name]));
      if (exists.length > 0) return;
      await trx.raw('CREATE TABLE ?? (LIKE events INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', [name]);
      const moved = await trx.raw(
        `WITH moved AS (DELETE FROM events_default WHERE timestamp >= ? AND timestamp < ? RETURNING *)
         INSERT INTO ?? SELECT * FROM moved`,
        [from, to, name],
      );
      await trx.raw(`ALTER TABLE events ATTACH PARTITION ?? FOR VALUES FROM ('${from}') TO ('${to}')`, [name]);
      this.logger.info('created events partition', { partition: name, moved_from_default: (moved as { rowCount?: number }).rowCount ?? 0 });
    });
  }
}
