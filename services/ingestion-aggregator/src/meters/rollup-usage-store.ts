import type { AggregationType, Scope, WindowSize } from '@billstream/contracts';
import type { Db, Knex, Trx } from '@billstream/db';
import { rowsOf } from '@billstream/db';
import { HOUR_MINUTES, MONTH_HOURS, MONTH_OF, NUMERIC } from './rollup-sql';
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
 * The pieces of [from, to): raw events in [from, mStart) and [mEnd, to); rollup minutes in
 * [mStart, hStart) and [hEnd, mEnd); rollup hours in [hStart, hEnd).
 * from <= mStart <= hStart <= hEnd <= mEnd <= to, normalised UTC strings.
 */
export interface RangeCut {
  from: string;
  mStart: string;
  hStart: string;
  hEnd: string;
  mEnd: string;
  to: string;
}

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
const stamp = (ms: number) => `${new Date(ms).toISOString().slice(0, 19)}.000000Z`;
/** Epoch ms of a normalised timestamp's whole seconds, and whether it has a fraction. */
const msOf = (t: string) => Date.parse(`${t.slice(0, 19)}Z`);
const floorTo = (t: string, unit: number) => Math.floor(msOf(t) / unit) * unit;
const ceilTo = (t: string, unit: number) => {
  const floor = floorTo(t, unit);
  return floor === msOf(t) && /^\.0+Z$/.test(t.slice(19)) ? floor : floor + unit;
};

/**
 * Cuts [from, to) into raw edges (its partial minutes), whole minutes of its partial hours and
 * whole hours. Without a whole minute it is all raw; without a whole hour, all its whole minutes
 * are one piece [mStart, mEnd) (hStart = hEnd = mStart).
 */
export function cutRange(from: string, to: string): RangeCut {
  const mStart = ceilTo(from, MINUTE_MS);
  const mEnd = floorTo(to, MINUTE_MS);
  if (mStart >= mEnd) return { from, mStart: from, hStart: from, hEnd: from, mEnd: from, to };
  let hStart = ceilTo(from, HOUR_MS);
  let hEnd = floorTo(to, HOUR_MS);
  if (hStart >= hEnd) [hStart, hEnd] = [mStart, mStart];
  return { from, mStart: stamp(mStart), hStart: stamp(hStart), hEnd: stamp(hEnd), mEnd: stamp(mEnd), to };
}

/** How the partial rows of the parts are folded into the value of a window or the whole range (UNIQUE_COUNT: `totalSql`). */
const COMBINE: Record<Exclude<AggregationType, 'UNIQUE_COUNT'>, string> = {
  COUNT: 'sum(n)::numeric',
  SUM: 'sum(s)',
  MAX: 'max(mx)',
  LATEST: '(array_agg(lv ORDER BY la DESC, le DESC) FILTER (WHERE lv IS NOT NULL))[1]',
};

/** The value over all the parts, as a one-row SELECT. */
function totalSql(type: Exclude<AggregationType, 'UNIQUE_COUNT'>, parts: string): string {
  return `SELECT ${COMBINE[type]} AS value FROM (${parts}) p`;
}

/** A window start (timestamptz) as the API writes it. */
const windowText = (w: string) => `to_char(${w} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS') || '.000000Z'`;

/**
 * The value per window (rows w, value) and over all the parts (w NULL). Windows are grouped by
 * their start as a timestamp (`trunc`) and written as text only once per window.
 */
function windowedSql(type: Exclude<AggregationType, 'UNIQUE_COUNT'>, parts: string, trunc: string): string {
  const grouped = `SELECT w, ${COMBINE[type]} AS value FROM (SELECT p.*, ${trunc} AS w FROM (${parts}) p) x GROUP BY GROUPING SETS ((w), ())`;
  return `SELECT ${windowText('w')} AS w, value FROM (${grouped}) g`;
}

const TRUNC_UNIT: Record<WindowSize, 'hour' | 'day'> = { HOUR: 'hour', DAY: 'day' };

/** A value of the query: a binding (`?`) or a column of the unnested ranges. */
type Value = (name: keyof RangeCut | 'customer') => string;

/**
 * The events of one customer in [lo, hi) that the meter (and the extra filters) counts: columns
 * "timestamp", event_id, raw (the aggregated property as text), kind (its JSON type).
 */
function edgeSql(scope: Scope, meter: Meter, extraFilters: MeterFilter[] | undefined, v: Value, bindings: Knex.RawBinding[], lo: keyof RangeCut, hi: keyof RangeCut): string {
  const field = meter.aggregationField ?? '';
  bindings.push(field, field, scope.tenantId, scope.environmentId);
  const head = `SELECT "timestamp", event_id, properties ->> ? AS raw, jsonb_typeof(properties -> ?) AS kind FROM events
    WHERE tenant_id = ? AND environment_id = ? AND external_customer_id = ${v('customer')} AND event_name = ?`;
  bindings.push(meter.eventName);
  const range = ` AND "timestamp" >= ${v(lo)} AND "timestamp" < ${v(hi)}`;
  return head + range + filterConditions(meter, extraFilters, bindings);
}

/**
 * The partial rows of one customer and range for COUNT, SUM, MAX and LATEST: rollup rows of the
 * whole hours, minute rows of the whole minutes of the partial hours, and one row per raw event
 * of the partial minutes at the edges, all with a `bucket` inside their window.
 * Columns: bucket and n, s, mx, lv, la, le (count, sum, max, latest value, time, event id).
 */
function partsSql(scope: Scope, meter: Meter, extraFilters: MeterFilter[] | undefined, v: Value, bindings: Knex.RawBinding[]): string {
  const rows = (table: string, lo: keyof RangeCut, hi: keyof RangeCut) => {
    bindings.push(meter.rollupSeries);
    return `SELECT bucket, event_count AS n, value_sum AS s, value_max AS mx, latest_value AS lv, latest_at AS la, latest_event_id AS le
    FROM ${table} WHERE series = ? AND external_customer_id = ${v('customer')} AND bucket >= ${v(lo)} AND bucket < ${v(hi)}`;
  };
  // Bindings are appended in the order the parts are written.
  const hours = rows('usage_rollups', 'hStart', 'hEnd');
  const minutes = [rows('usage_rollup_minutes', 'mStart', 'hStart'), rows('usage_rollup_minutes', 'hEnd', 'mEnd')];
  const edges = `SELECT "timestamp", 1, num, num, num, "timestamp", event_id FROM (
      SELECT e.*, ${NUMERIC} AS num FROM (${edgeSql(scope, meter, extraFilters, v, bindings, 'from', 'mStart')}
      UNION ALL ${edgeSql(scope, meter, extraFilters, v, bindings, 'mEnd', 'to')}) e) x`;
  return [hours, ...minutes, edges].join('\n UNION ALL ');
}

const ONES = `(~B'0'::bit(${MONTH_HOURS}))`;
const MINUTE_ONES = `(~B'0'::bit(${HOUR_MINUTES}))`;
/** Whole minutes from `hour` to `t` (both whole minutes: an exact integer). */
const minutesFrom = (hour: string, t: string) => `(extract(epoch FROM ${t} - ${hour}) / 60)::int`;
/** The hour index in its month (0 to 743) of a whole UTC hour `t` (timestamptz), `month` its month's start. */
const hourIndex = (t: string, month: string) => `(extract(epoch FROM ${t} - ${month}) / 3600)::int`;

/**
 * UNIQUE_COUNT of one customer and range (docs/adr/0023): the distinct digests of the values
 * in the month bitmap rows whose hours meet the range's whole hours [hStart, hEnd), united with
 * those of the raw events of the partial hours at its edges. Per window (`unit` hour or day, a
 * window never crosses a UTC month) and in total (`unit` month): each piece (the whole hours of a
 * window, or of a month for the total) is a mask of its month's hours, made arithmetically (bits
 * a to b-1: ONES >> a AND NOT ONES >> b); a row counts for a piece when its bitmap meets the
 * mask. The rows of the months are read once (one index range, about one row per distinct value
 * and month) and joined to the pieces' masks. Within a window the rows are distinct already (one
 * month, one row per digest): its value is their count plus the edge digests not among them.
 * The total counts the distinct digests over all the pieces and edges (a hash union).
 * Columns: w (window start as text, NULL for the total), value; only the total when `unit` is month.
 */
function uniqueSql(scope: Scope, meter: Meter, extraFilters: MeterFilter[] | undefined, v: Value, bindings: Knex.RawBinding[], unit: 'hour' | 'day' | 'month'): string {
  const utc = (t: string) => `((${t}) AT TIME ZONE 'UTC')`;
  const pieces = `SELECT w, month, (${ONES} >> ${hourIndex('greatest(w, hs)', 'month')}) & ~(${ONES} >> ${hourIndex('least(w_end, he)', 'month')}) AS mask
    FROM (SELECT ${utc('t')} AS w, ${utc(`t + interval '1 ${unit}'`)} AS w_end, ${utc("date_trunc('month', t)")} AS month, hs, he
      FROM (SELECT ${v('hStart')} AS hs, ${v('hEnd')} AS he) r,
        generate_series(date_trunc('${unit}', ${utc('r.hs')}), ${utc('r.he')} - interval '1 hour', interval '1 ${unit}') t
      WHERE r.hs < r.he) g`;
  bindings.push(meter.rollupSeries);
  const rows = `SELECT month, value_sha256, hours FROM usage_rollup_value_months
    WHERE series = ? AND external_customer_id = ${v('customer')} AND month >= ${MONTH_OF(v('hStart'))} AND month < ${v('hEnd')}`;
  // The digests of the whole minutes [lo, hi) of partial hours: hour bitmap rows meeting the
  // minutes' mask within their hour (bits a to b-1, a and b the piece's ends clamped to the hour).
  const minuteRows = (lo: keyof RangeCut, hi: keyof RangeCut) => {
    const piece = `(SELECT ${v(lo)} AS lo, ${v(hi)} AS hi)`;
    bindings.push(meter.rollupSeries);
    const mask = `(${MINUTE_ONES} >> ${minutesFrom('vh.hour', 'greatest(vh.hour, r.lo)')}) & ~(${MINUTE_ONES} >> ${minutesFrom('vh.hour', "least(vh.hour + interval '1 hour', r.hi)")})`;
    return `SELECT vh.hour, vh.value_sha256 FROM ${piece} r JOIN usage_rollup_value_hours vh
      ON vh.series = ? AND vh.external_customer_id = ${v('customer')} AND vh.hour >= date_trunc('hour', r.lo, 'UTC') AND vh.hour < r.hi
      WHERE (vh.minutes & ${mask}) <> B'0'::bit(${HOUR_MINUTES})`;
  };
  const edges = `SELECT DISTINCT date_trunc('${unit}', t, 'UTC') AS w, h FROM (
      SELECT "timestamp" AS t, sha256(convert_to(raw, 'UTF8')) AS h
      FROM (${edgeSql(scope, meter, extraFilters, v, bindings, 'from', 'mStart')} UNION ALL ${edgeSql(scope, meter, extraFilters, v, bindings, 'mEnd', 'to')}) e
      WHERE raw IS NOT NULL
      UNION ALL ${minuteRows('mStart', 'hStart')}
      UNION ALL ${minuteRows('hEnd', 'mEnd')}) x`;
  const meets = (mask: string) => `(m.hours & ${mask}) <> B'0'::bit(${MONTH_HOURS})`;
  const head = `WITH pieces AS MATERIALIZED (${pieces}),
    months AS MATERIALIZED (${rows}),
    edges AS MATERIALIZED (${edges})`;
  const total = `SELECT count(*)::numeric AS value FROM (
      SELECT m.value_sha256 FROM months m JOIN (SELECT month, bit_or(mask) AS mask FROM pieces GROUP BY month) t ON t.month = m.month WHERE ${meets('t.mask')}
      UNION SELECT h FROM edges) t`;
  if (unit === 'month') return `${head}\n${total}`;
  return `${head}
    SELECT ${windowText('w')} AS w, sum(n)::numeric AS value FROM (
      SELECT p.w, (SELECT count(*) FROM months m WHERE m.month = p.month AND ${meets('p.mask')}) AS n FROM pieces p
      UNION ALL SELECT e.w, count(*) FROM edges e LEFT JOIN pieces p ON p.w = e.w
        LEFT JOIN months m ON m.value_sha256 = e.h AND m.month = p.month AND ${meets('p.mask')}
        WHERE m.value_sha256 IS NULL GROUP BY e.w) c
    GROUP BY w
    UNION ALL SELECT NULL, (${total})`;
}

/**
 * Usage of meters from their rollups (hours, and minutes of the partial hours) plus the raw
 * events of the partial minutes at the range's edges; the same answers as `UsageStore` (proven by rollups.int.test.ts) when `rollupCovers`.
 */
export class RollupUsageStore {
  async aggregate(conn: Db | Trx, scope: Scope, q: UsageQuery): Promise<UsageRows> {
    const { meter } = q;
    const cut = cutRange(q.from, q.to);
    const bindings: Knex.RawBinding[] = [];
    const v: Value = (name) => {
      bindings.push(name === 'customer' ? q.externalCustomerId : cut[name]);
      return name === 'customer' ? '?' : '?::timestamptz';
    };
    const type = meter.aggregationType;
    const unique = type === 'UNIQUE_COUNT';
    const sql = !q.windowSize
      ? unique
        ? uniqueSql(scope, meter, q.extraFilters, v, bindings, 'month')
        : totalSql(type, partsSql(scope, meter, q.extraFilters, v, bindings))
      : unique
        ? uniqueSql(scope, meter, q.extraFilters, v, bindings, TRUNC_UNIT[q.windowSize])
        : windowedSql(type, partsSql(scope, meter, q.extraFilters, v, bindings), `date_trunc('${TRUNC_UNIT[q.windowSize]}', bucket, 'UTC')`);
    if (!q.windowSize) {
      const rows = rowsOf<{ value: string | null }>(await conn.raw(sql, bindings));
      return { total: rows[0]?.value ?? null, byWindow: new Map() };
    }
    const rows = rowsOf<{ w: string | null; value: string | null }>(await conn.raw(sql, bindings));
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
    const cuts = ranges.map((r) => cutRange(r.from, r.to));
    const columns: Array<keyof RangeCut> = ['from', 'mStart', 'hStart', 'hEnd', 'mEnd', 'to'];
    const bindings: Knex.RawBinding[] = [ranges.map((r) => r.externalCustomerId), ...columns.map((c) => cuts.map((cut) => cut[c]))];
    const v: Value = (name) => `q.${name === 'customer' ? 'customer' : `t_${name}`}`;
    const type = meter.aggregationType;
    const sql = type === 'UNIQUE_COUNT' ? uniqueSql(scope, meter, q.extraFilters, v, bindings, 'month') : totalSql(type, partsSql(scope, meter, q.extraFilters, v, bindings));
    const rows = rowsOf<{ i: string; value: string | null }>(
      await conn.raw(
        `SELECT q.i, a.value
         FROM unnest(?::text[], ${columns.map(() => '?::timestamptz[]').join(', ')})
           WITH ORDINALITY AS q(customer, ${columns.map((c) => `t_${c}`).join(', ')}, i)
         CROSS JOIN LATERAL (${sql}) a`,
        bindings,
      ),
    );
    const values = new Array<string | null>(ranges.length).fill(null);
    for (const row of rows) values[Number(row.i) - 1] = row.value;
    return values;
  }
}
