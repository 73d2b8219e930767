import type { AggregationType, Scope, WindowSize } from '@billstream/contracts';
import type { Db, Knex, Trx } from '@billstream/db';
import { rowsOf } from '@billstream/db';
import { NUMERIC } from './rollup-sql';
import type { Meter, MeterFilter } from './store';

export interface UsageQuery {
  meter: Meter;
  externalCustomerId: string;
  /** Inclusive, normalised UTC with microseconds. */
  from: string;
  /** Exclusive, normalised UTC with microseconds. */
  to: string;
  windowSize?: WindowSize;
  /** Filters on top of the meter's (a price's filter_values): property -> accepted values. */
  extraFilters?: MeterFilter[];
}

export interface UsageRows {
  /** The value over the whole range (null when no event counted). */
  total: string | null;
  /** Values by window start (`YYYY-MM-DDTHH:00:00.000000Z`), only windows with events. */
  byWindow: Map<string, string | null>;
}


const AGGREGATES: Record<AggregationType, string> = {
  COUNT: 'count(*)::numeric',
  SUM: `sum(${NUMERIC})`,
  MAX: `max(${NUMERIC})`,
  UNIQUE_COUNT: 'count(DISTINCT raw)::numeric',
  LATEST: `(array_agg(${NUMERIC} ORDER BY "timestamp" DESC, event_id DESC) FILTER (WHERE ${NUMERIC} IS NOT NULL))[1]`,
};

const TRUNC_UNIT: Record<WindowSize, string> = { HOUR: 'hour', DAY: 'day' };

/** One customer and time range of a batch (`aggregateMany`). */
export interface UsageRange {
  externalCustomerId: string;
  /** Inclusive, normalised UTC with microseconds. */
  from: string;
  /** Exclusive, normalised UTC with microseconds. */
  to: string;
}

/** Many customers and time ranges of one meter with the same extra filters. */
export interface UsageManyQuery {
  meter: Meter;
  extraFilters?: MeterFilter[];
  ranges: UsageRange[];
}

/** The meter's and the extra filters as ` AND ...` conditions on `properties` (bindings appended). */
export function filterConditions(meter: Meter, extraFilters: MeterFilter[] | undefined, bindings: Knex.RawBinding[]): string {
  let where = '';
  for (const f of [...meter.filters, ...(extraFilters ?? [])]) {
    where += ' AND properties ->> ? = ANY(?::text[])';
    bindings.push(f.key, f.values);
  }
  return where;
}

/** Usage of meters over stored events; holds no connection (each call is given one). */
export class UsageStore {
  /** Aggregates a meter's events of one customer over a time range, in one scan (served by events_customer_name_time). */
  async aggregate(conn: Db | Trx, scope: Scope, q: UsageQuery): Promise<UsageRows> {
    const { meter } = q;
    const field = meter.aggregationField ?? '';
    const bindings: Knex.RawBinding[] = [field, field, scope.tenantId, scope.environmentId, q.externalCustomerId, meter.eventName, q.from, q.to];
    const where = filterConditions(meter, q.extraFilters, bindings);
    const source = `
      SELECT "timestamp", event_id, properties ->> ? AS raw, jsonb_typeof(properties -> ?) AS kind
      FROM events
      WHERE tenant_id = ? AND environment_id = ? AND external_customer_id = ? AND event_name = ?
        AND "timestamp" >= ? AND "timestamp" < ?${where}`;
    const aggregate = AGGREGATES[meter.aggregationType];
    if (!q.windowSize) {
      const rows = rowsOf<{ value: string | null }>(await conn.raw(`SELECT ${aggregate} AS value FROM (${source}) e`, bindings));
      return { total: rows[0]?.value ?? null, byWindow: new Map() };
    }
    const bucket = `to_char(date_trunc('${TRUNC_UNIT[q.windowSize]}', "timestamp" AT TIME ZONE 'UTC'), 'YYYY-MM-DD"T"HH24:MI:SS') || '.000000Z'`;
    const rows = rowsOf<{ bucket: string | null; value: string | null }>(
      await conn.raw(
        `SELECT bucket, ${aggregate} AS value FROM (SELECT e.*, ${bucket} AS bucket FROM (${source}) e) w
         GROUP BY GROUPING SETS ((bucket), ())`,
        bindings,
      ),
    );
    const byWindow = new Map<string, string | null>();
    let total: string | null = null;
    for (const row of rows) {
      if (row.bucket === null) total = row.value;
      else byWindow.set(row.bucket, row.value);
    }
    return { total, byWindow };
  }

  /**
   * The totals of one meter (with the same extra filters) for many customers and time ranges,
   * in one SQL: for each range, the very aggregate `aggregate` runs over the very rows it
   * reads, as a LATERAL subquery over the unnested ranges, so each is one scan of
   * events_customer_name_time (tenant, environment, customer, event name, time range) and a
   * range without events gets what `aggregate` gives for none. Answers in the order of the
   * ranges (null when no event counted).
   */
  async aggregateMany(conn: Db | Trx, scope: Scope, q: UsageManyQuery): Promise<Array<string | null>> {
    const { meter, ranges } = q;
    if (ranges.length === 0) return [];
    const field = meter.aggregationField ?? '';
    const bindings: Knex.RawBinding[] = [
      ranges.map((r) => r.externalCustomerId),
      ranges.map((r) => r.from),
      ranges.map((r) => r.to),
      field,
      field,
      scope.tenantId,
      scope.environmentId,
      meter.eventName,
    ];
    const where = filterConditions(meter, q.extraFilters, bindings);
    const rows = rowsOf<{ i: string; value: string | null }>(
      await conn.raw(
        `SELECT q.i, a.value
         FROM unnest(?::text[], ?::timestamptz[], ?::timestamptz[]) WITH ORDINALITY AS q(customer, t_from, t_to, i)
         CROSS JOIN LATERAL (
           SELECT ${AGGREGATES[meter.aggregationType]} AS value FROM (
             SELECT "timestamp", event_id, properties ->> ? AS raw, jsonb_typeof(properties -> ?) AS kind
             FROM events
             WHERE tenant_id = ? AND environment_id = ? AND external_customer_id = q.customer AND event_name = ?
               AND "timestamp" >= q.t_from AND "timestamp" < q.t_to${where}
           ) e
         ) a`,
        bindings,
      ),
    );
    const values = new Array<string | null>(ranges.length).fill(null);
    for (const row of rows) values[Number(row.i) - 1] = row.value;
    return values;
  }
}
