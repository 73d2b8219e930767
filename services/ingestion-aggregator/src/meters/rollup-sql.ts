/**
 * The SQL that keeps usage rollups (docs/adr/0023-usage-rollups.md), shared by the event store
 * (each stored batch) and the rollup builder (a meter's backfill), so both roll up alike.
 */

/** A decimal written as a string (no `?` quantifier: knex reads `?` as a binding). */
const NUMERIC_TEXT = '^-{0,1}[0-9]+([.][0-9]+){0,1}$';

/** `num`: the aggregated property as numeric, when it is a number or a decimal string. */
export const NUMERIC = `CASE WHEN kind = 'number' THEN raw::numeric WHEN kind = 'string' AND raw ~ '${NUMERIC_TEXT}' THEN raw::numeric END`;

/** The UTC hour of `"timestamp"` (whatever the session's time zone). */
const HOUR_OF = (column: string) => `date_trunc('hour', ${column}, 'UTC')`;

/** The UTC month of a timestamp. */
export const MONTH_OF = (column: string) => `date_trunc('month', ${column}, 'UTC')`;

/** Bits of a UNIQUE_COUNT month bitmap: one per hour of the longest month (31 x 24). */
export const MONTH_HOURS = 744;

/** A month bitmap with only the bit of the UTC hour `hour` set (`month` its month's start): bit i is hour i of the month. */
export const HOUR_BIT = (hour: string, month: string) =>
  `(B'1'::bit(${MONTH_HOURS}) >> (extract(epoch FROM ${hour} - ${month}) / 3600)::int)`;

/** The SHA-256 (hex) of a meter definition's parts as one JSON array (unambiguous). */
const seriesOf = (tenant: string, environment: string, eventName: string, field: string, filters: string) =>
  `encode(sha256(convert_to(jsonb_build_array(${tenant}, ${environment}, ${eventName}, ${field}, ${filters})::text, 'UTF8')), 'hex')`;

/**
 * The rollup series of a meter row: a digest of its scope, event name, field and filters, what
 * its rollup rows depend on. Equal definitions, whatever the aggregation, share one series;
 * filters written in another order make another series (correct, only not shared).
 */
export const ROLLUP_SERIES = seriesOf('tenant_id', 'environment_id', 'event_name', 'aggregation_field', 'filters');

/** `ROLLUP_SERIES` of bound values: tenant, environment, event name, field (or null), filters (JSON text). */
export const ROLLUP_SERIES_OF_VALUES = seriesOf('?::text', '?::text', '?::text', '?::text', '?::jsonb');

/**
 * True when the event `s` (its `properties`) passes every filter of the meter `m`: the property,
 * as text, is one of the filter's values (a missing property passes none), as in `UsageStore`.
 */
const METER_ACCEPTS = `(m.filters = '[]'::jsonb OR NOT EXISTS (
    SELECT 1 FROM jsonb_array_elements(m.filters) f
    WHERE NOT coalesce(s.properties ->> (f ->> 'key') IN (SELECT jsonb_array_elements_text(f -> 'values')), false)))`;

/**
 * A `metered` CTE body: one row per (event `s` of `source`, series of the meters `m` that count
 * it), flagged with what the series' meters need: `partials` (a COUNT, SUM, MAX or LATEST meter)
 * and `digests` (a UNIQUE_COUNT meter). `meters` restricts the meters joined (SQL on `m`).
 */
export const meteredSql = (source: string, meters: string, where: string) => `
  SELECT s.tenant_id, s.environment_id, m.rollup_series AS series, s.external_customer_id, s."timestamp", s.event_id,
    s.properties ->> coalesce(m.aggregation_field, '') AS raw,
    jsonb_typeof(s.properties -> coalesce(m.aggregation_field, '')) AS kind,
    bool_or(m.aggregation_type <> 'UNIQUE_COUNT') AS partials,
    bool_or(m.aggregation_type = 'UNIQUE_COUNT') AS digests
  FROM ${source} s JOIN meters m ON m.tenant_id = s.tenant_id AND m.environment_id = s.environment_id AND m.event_name = s.event_name AND ${meters}
  WHERE ${where} AND ${METER_ACCEPTS}
  GROUP BY s.tenant_id, s.environment_id, m.rollup_series, s.external_customer_id, s."timestamp", s.event_id, raw, kind`;

/**
 * CTEs (to follow a `metered` CTE) that add its rows to the rollups: per (series, customer, hour)
 * one upsert of the partials (keys in sorted order: concurrent batches wait, never deadlock;
 * the LATEST candidate ranked first by one sort of all rows, not by an ordered aggregate per group),
 * and for series of UNIQUE_COUNT meters, per (series, customer, UTC month, digest of a value), the
 * bitmap of the month's hours holding the value, OR-ed into the stored one (a new row version only
 * when a bit is new).
 */
export const ROLLUP_CTES = `
valued AS (
  SELECT metered.*, ${HOUR_OF('"timestamp"')} AS bucket, ${NUMERIC} AS num FROM metered
),
ranked AS (
  SELECT valued.*, row_number() OVER (
    PARTITION BY series, external_customer_id, bucket ORDER BY num IS NULL, "timestamp" DESC, event_id DESC) AS rank
  FROM valued WHERE partials
),
rolled AS (
  INSERT INTO usage_rollups AS r (tenant_id, environment_id, series, external_customer_id, bucket,
    event_count, value_sum, value_max, latest_value, latest_at, latest_event_id)
  SELECT tenant_id, environment_id, series, external_customer_id, bucket, count(*), sum(num), max(num),
    max(num) FILTER (WHERE rank = 1), max("timestamp") FILTER (WHERE rank = 1 AND num IS NOT NULL), max(event_id) FILTER (WHERE rank = 1 AND num IS NOT NULL)
  FROM ranked
  GROUP BY series, external_customer_id, bucket, tenant_id, environment_id
  ORDER BY series, external_customer_id, bucket
  ON CONFLICT (series, external_customer_id, bucket) DO UPDATE SET
    event_count = r.event_count + excluded.event_count,
    value_sum = coalesce(r.value_sum + excluded.value_sum, r.value_sum, excluded.value_sum),
    value_max = greatest(r.value_max, excluded.value_max),
    latest_value = CASE WHEN (excluded.latest_at, excluded.latest_event_id) > (r.latest_at, r.latest_event_id) OR r.latest_at IS NULL
      THEN coalesce(excluded.latest_value, r.latest_value) ELSE r.latest_value END,
    latest_event_id = CASE WHEN (excluded.latest_at, excluded.latest_event_id) > (r.latest_at, r.latest_event_id) OR r.latest_at IS NULL
      THEN coalesce(excluded.latest_event_id, r.latest_event_id) ELSE r.latest_event_id END,
    latest_at = CASE WHEN (excluded.latest_at, excluded.latest_event_id) > (r.latest_at, r.latest_event_id) OR r.latest_at IS NULL
      THEN coalesce(excluded.latest_at, r.latest_at) ELSE r.latest_at END
  RETURNING 1
),
value_months AS (
  INSERT INTO usage_rollup_value_months AS u (tenant_id, environment_id, series, external_customer_id, month, value_sha256, hours)
  SELECT tenant_id, environment_id, series, external_customer_id, month, h, bit_or(${HOUR_BIT('bucket', 'month')})
  FROM (SELECT v.*, ${MONTH_OF('v."timestamp"')} AS month, sha256(convert_to(v.raw, 'UTF8')) AS h FROM valued v WHERE v.digests AND v.raw IS NOT NULL) x
  GROUP BY series, external_customer_id, month, h, tenant_id, environment_id
  ORDER BY series, external_customer_id, month, h
  ON CONFLICT (series, external_customer_id, month, value_sha256) DO UPDATE SET hours = u.hours | excluded.hours
    WHERE (u.hours | excluded.hours) <> u.hours
  RETURNING 1
)`;
