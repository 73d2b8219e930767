import type { AggregationType, Scope, WindowSize } from '@billstream/contracts';
import type { Db, Knex, Trx } from '@billstream/db';
import { rowsOf } from '@billstream/db';
import { NUMERIC } from './rollup-sql';
import type { Meter, MeterFilter } from './store';
import { filterConditions, type UsageManyQuery, type UsageQuery, type UsageRows } from './usage-store';

/**
 * True when the meter's rollup answers a query with these extra filters exactly: the rollup is
 * built (`rollupReadyAt`) and every extra filter only repeats one of the meter's (same property,
 * accepting all the values the meter's filter accepts), so it removes no event the meter counts.
 */
export function rollupCovers(meter: Meter, extraFilters: MeterFilter[] | undefined): boolean {
  if (!meter.rollupReadyAt) return false;
  return (extraFilters ?? []).every((extra) => {
    const accepted = new Set(extra.values);
    return meter.filters.some((f) => f.key === extra.key && f.values.every((v) => accepted.has(v)));
  });
}

/**
 * The pieces of [from, to): raw events in [from, hStart) and [hEnd, to); rollup hours in
 * [hStart, hEnd) (for UNIQUE_COUNT: hours in [hStart, dStart) and [dEnd, hEnd), days in
 * [dStart, dEnd)). from <= hStart <= dStart <= dEnd <= hEnd <= to, normalised UTC strings.
 */
export interface RangeCut {
  from: string;
  hStart: string;
  dStart: string;
  dEnd: string;
  hEnd: string;
  to: string;
}

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
const stamp = (ms: number) => `${new Date(ms).toISOString().slice(0, 19)}.000000Z`;
/** Epoch ms of a normalised timestamp's whole seconds, and whether it has a fraction. */
const msOf = (t: string) => Date.parse(`${t.slice(0, 19)}Z`);
const floorTo = (t: string, unit: number) => Math.floor(msOf(t) / unit) * unit;
const ceilTo = (t: string, unit: number) => {
  const floor = floorTo(t, unit);
  return floor === msOf(t) && /^\.0+Z$/.test(t.slice(19)) ? floor : floor + unit;
};

/** Cuts [from, to) into raw edges and whole rollup hours (and days when `days`). */
export function cutRange(from: string, to: string, days: boolean): RangeCut {
  const hStart = ceilTo(from, HOUR_MS);
  const hEnd = floorTo(to, HOUR_MS);
  if (hStart >= hEnd) return { from, hStart: from, dStart: from, dEnd: from, hEnd: from, to };
  const dStart = ceilTo(stamp(hStart), DAY_MS);
  const dEnd = floorTo(stamp(hEnd), DAY_MS);
  const whole = days && dStart < dEnd;
  return {
    from,
    hStart: stamp(hStart),
    dStart: stamp(whole ? dStart : hEnd),
    dEnd: stamp(whole ? dEnd : hEnd),
    hEnd: stamp(hEnd),
    to,
  };
}

/** How the partial rows of the parts are folded into the value of a window or the whole range (UNIQUE_COUNT: `totalSql`). */
const COMBINE: Record<Exclude<AggregationType, 'UNIQUE_COUNT'>, string> = {
  COUNT: 'sum(n)::numeric',
  SUM: 'sum(s)',
  MAX: 'max(mx)',
  LATEST: '(array_agg(lv ORDER BY la DESC, le DESC) FILTER (WHERE lv IS NOT NULL))[1]',
};

/**
 * The value over all the parts, as a one-row SELECT. Distinct digests are counted by hashing
 * (`SELECT DISTINCT`), not by `count(DISTINCT)`, which sorts: tens of thousands of day rows a month.
 */
function totalSql(type: AggregationType, parts: string): string {
  if (type === 'UNIQUE_COUNT') return `SELECT count(*)::numeric AS value FROM (SELECT DISTINCT h FROM (${parts}) p) d`;
  return `SELECT ${COMBINE[type]} AS value FROM (${parts}) p`;
}

/**
 * The value per window (rows w, value) and over all the parts (w NULL). Windows are grouped by
 * their start as a timestamp (`trunc`) and written as text only once per window. UNIQUE_COUNT:
 * rows marked `d` are distinct within their window already (a window's day rows; an HOUR
 * window's hour rows), and a window holding them holds nothing else (`cutRange`), so only the
 * other windows (edge days, edge hours) count distinct digests.
 */
function windowedSql(type: AggregationType, parts: string, trunc: string): string {
  const grouped =
    type === 'UNIQUE_COUNT'
      ? `WITH p AS (SELECT ${trunc} AS w, h, d FROM (${parts}) x)
      SELECT w, sum(n)::numeric AS value FROM (
        SELECT w, count(*) AS n FROM p WHERE d GROUP BY w
        UNION ALL SELECT w, count(*) FROM (SELECT DISTINCT w, h FROM p WHERE NOT d) u GROUP BY w) c GROUP BY w
      UNION ALL SELECT NULL, count(*)::numeric FROM (SELECT DISTINCT h FROM p) t`
      : `SELECT w, ${COMBINE[type]} AS value FROM (SELECT p.*, ${trunc} AS w FROM (${parts}) p) x GROUP BY GROUPING SETS ((w), ())`;
  return `SELECT to_char(w AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS') || '.000000Z' AS w, value FROM (${grouped}) g`;
}

const TRUNC_UNIT: Record<WindowSize, string> = { HOUR: 'hour', DAY: 'day' };

/** A value of the query: a binding (`?`) or a column of the unnested ranges. */
type Value = (name: keyof RangeCut | 'customer') => string;

/**
 * The partial rows of one customer and range: rollup rows of the whole hours (days) and one
 * row per raw event of the edges, all with a `bucket` inside their window. Columns: bucket and
 * n, s, mx, lv, la, le (count, sum, max, latest value, time, event id), or bucket, h (the
 * value's digest) and d (see `windowedSql`) for UNIQUE_COUNT.
 */
function partsSql(
  scope: Scope,
  meter: Meter,
  extraFilters: MeterFilter[] | undefined,
  v: Value,
  bindings: Knex.RawBinding[],
  windowSize: WindowSize | undefined,
): string {
  const field = meter.aggregationField ?? '';
  const key = () => {
    bindings.push(meter.rollupSeries);
    return `series = ? AND external_customer_id = ${v('customer')}`;
  };
  const edge = (lo: keyof RangeCut, hi: keyof RangeCut) => {
    bindings.push(field, field, scope.tenantId, scope.environmentId);
    const head = `SELECT "timestamp", event_id, properties ->> ? AS raw, jsonb_typeof(properties -> ?) AS kind FROM events
      WHERE tenant_id = ? AND environment_id = ? AND external_customer_id = ${v('customer')} AND event_name = ?`;
    bindings.push(meter.eventName);
    const range = ` AND "timestamp" >= ${v(lo)} AND "timestamp" < ${v(hi)}`;
    return head + range + filterConditions(meter, extraFilters, bindings);
  };
  if (meter.aggregationType === 'UNIQUE_COUNT') {
    const values = (span: string, lo: keyof RangeCut, hi: keyof RangeCut) =>
      `SELECT bucket, value_sha256 AS h, ${span === 'day' || windowSize === 'HOUR'} AS d FROM usage_rollup_values WHERE ${key()} AND span = '${span}' AND bucket >= ${v(lo)} AND bucket < ${v(hi)}`;
    return [
      values('day', 'dStart', 'dEnd'),
      values('hour', 'hStart', 'dStart'),
      values('hour', 'dEnd', 'hEnd'),
      `SELECT "timestamp", sha256(convert_to(raw, 'UTF8')), false FROM (${edge('from', 'hStart')} UNION ALL ${edge('hEnd', 'to')}) e WHERE raw IS NOT NULL`,
    ].join('\n UNION ALL ');
  }
  const rollups = `SELECT bucket, event_count AS n, value_sum AS s, value_max AS mx, latest_value AS lv, latest_at AS la, latest_event_id AS le
    FROM usage_rollups WHERE ${key()} AND bucket >= ${v('hStart')} AND bucket < ${v('hEnd')}`;
  const edges = `SELECT "timestamp", 1, num, num, num, "timestamp", event_id FROM (
      SELECT e.*, ${NUMERIC} AS num FROM (${edge('from', 'hStart')} UNION ALL ${edge('hEnd', 'to')}) e) x`;
  return `${rollups}\n UNION ALL ${edges}`;
}

/**
 * Usage of meters from their rollups plus the raw events of the partial hours at the range's
 * edges; the same answers as `UsageStore` (proven by rollups.int.test.ts) when `rollupCovers`.
 */
export class RollupUsageStore {
  async aggregate(conn: Db | Trx, scope: Scope, q: UsageQuery): Promise<UsageRows> {
    const { meter } = q;
    const cut = cutRange(q.from, q.to, q.windowSize !== 'HOUR');
    const bindings: Knex.RawBinding[] = [];
    const v: Value = (name) => {
      bindings.push(name === 'customer' ? q.externalCustomerId : cut[name]);
      return name === 'customer' ? '?' : '?::timestamptz';
    };
    const parts = partsSql(scope, meter, q.extraFilters, v, bindings, q.windowSize);
    if (!q.windowSize) {
      const rows = rowsOf<{ value: string | null }>(await conn.raw(totalSql(meter.aggregationType, parts), bindings));
      return { total: rows[0]?.value ?? null, byWindow: new Map() };
    }
    const trunc = `date_trunc('${TRUNC_UNIT[q.windowSize]}', bucket, 'UTC')`;
    const rows = rowsOf<{ w: string | null; value: string | null }>(
      await conn.raw(windowedSql(meter.aggregationType, parts, trunc), bindings),
    );
    const byWindow = new Map<string, string | null>();
    let total: string | null = null;
    for (const row of rows) {
      if (row.w === null) total = row.value;
      else byWindow.set(row.w, row.value);
    }
    return { total, byWindow };
  }

  /** As `UsageStore.aggregateMany`: one statement, a LATERAL subquery per (customer, range). */
  async aggregateMany(conn: Db | Trx, scope: Scope, q: UsageManyQuery): Promise<Array<string | null>> {
    const { meter, ranges } = q;
    if (ranges.length === 0) return [];
    const cuts = ranges.map((r) => cutRange(r.from, r.to, true));
    const columns: Array<keyof RangeCut> = ['from', 'hStart', 'dStart', 'dEnd', 'hEnd', 'to'];
    const bindings: Knex.RawBinding[] = [ranges.map((r) => r.externalCustomerId), ...columns.map((c) => cuts.map((cut) => cut[c]))];
    const parts = partsSql(scope, meter, q.extraFilters, (name) => `q.${name === 'customer' ? 'customer' : `t_${name}`}`, bindings, undefined);
    const rows = rowsOf<{ i: string; value: string | null }>(
      await conn.raw(
        `SELECT q.i, a.value
         FROM unnest(?::text[], ${columns.map(() => '?::timestamptz[]').join(', ')})
           WITH ORDINALITY AS q(customer, ${columns.map((c) => `t_${c}`).join(', ')}, i)
         CROSS JOIN LATERAL (${totalSql(meter.aggregationType, parts)}) a`,
        bindings,
      ),
    );
    const values = new Array<string | null>(ranges.length).fill(null);
    for (const row of rows) values[Number(row.i) - 1] = row.value;
    return values;
  }
}
