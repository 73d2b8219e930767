/**
 * The SQL that keeps usage rollups (docs/adr/0023-usage-rollups.md), shared by the event store
 * (each stored batch) and the rollup builder (a meter's backfill), so both roll up alike.
 */

/** A decimal written as a string (no `?` quantifier: knex reads `?` as a binding). */
const NUMERIC_TEXT = '^-{0,1}[0-9]+([.][0-9]+){0,1}$';

/** `num`: the aggregated property as numeric, when it is a number or a decimal string. */
export const NUMERIC = `CASE WHEN kind = 'number' THEN raw::numeric WHEN kind = 'string' AND raw ~ '${NUMERIC_TEXT}' THEN raw::numeric END`;

/** The UTC hour of a timestamp (whatever the session's time zone). */
const HOUR_OF = (column: string) => `date_trunc('hour', ${column}, 'UTC')`;

/** The UTC minute of a timestamp. */
const MINUTE_OF = (column: string) => `date_trunc('minute', ${column}, 'UTC')`;

/** The UTC month of a timestamp. */
export const MONTH_OF = (column: string) => `date_trunc('month', ${column}, 'UTC')`;

/** Bits of a UNIQUE_COUNT month bitmap: one per hour of the longest month (31 x 24). */
export const MONTH_HOURS = 744;

/** A month bitmap with only the bit of the UTC hour `hour` set (`month` its month's start): bit i is hour i of the month. */
export const HOUR_BIT = (hour: string, month: string) =>
  `(B'1'::bit(${MONTH_HOURS}) >> (extract(epoch FROM ${hour} - ${month}) / 3600)::int)`;

/** Bits of a UNIQUE_COUNT hour bitmap: one per minute of the hour. */
export const HOUR_MINUTES = 60;

/** An hour bitmap with only the bit of the UTC minute `minute` set (`hour` its hour's start): bit i is minute i of the hour. */
const MINUTE_BIT = (minute: string, hour: string) => `(B'1'::bit(${HOUR_MINUTES}) >> (extract(epoch FROM ${minute} - ${hour}) / 60)::int)`;

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

/** The upsert of partial rows (`usage_rollups` or `usage_rollup_minutes`): counts and sums added, greatest maximum, the later LATEST candidate. */
const upsertPartials = (table: string, rows: string) => `
  INSERT INTO ${table} AS r (tenant_id, environment_id, series, external_customer_id, bucket,
    event_count, value_sum, value_max, latest_value, latest_at, latest_event_id)
  ${rows}
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
  RETURNING 1`;

/**
 * CTEs (to follow a `metered` CTE) that add its rows to the rollups. For series of COUNT, SUM,
 * MAX or LATEST meters: per (series, customer, UTC minute) the partials of the batch's events
 * (the LATEST candidate ranked first by one sort of all rows, not by an ordered aggregate per
 * group), upserted into `usage_rollup_minutes`, and the same folded per UTC hour (sums of sums,
 * greatest maximum, the latest of the minutes' candidates: they never tie, being in different
 * minutes) upserted into `usage_rollups`. For series
 * of UNIQUE_COUNT meters: per (series, customer, UTC hour, digest of a value), the bitmap of the
 * hour's minutes holding the value, OR-ed into `usage_rollup_value_hours`, and per (series,
 * customer, UTC month, digest) the bitmap of the month's hours, OR-ed into
 * `usage_rollup_value_months` (a new row version only when a bit is new). Keys are upserted in
 * sorted order: concurrent batches wait, never deadlock.
 */
export const ROLLUP_CTES = `
valued AS (
  SELECT metered.*, ${MINUTE_OF('"timestamp"')} AS minute, ${HOUR_OF('"timestamp"')} AS hour, ${NUMERIC} AS num FROM metered
),
ranked AS (
  SELECT valued.*, row_number() OVER (
    PARTITION BY series, external_customer_id, minute ORDER BY num IS NULL, "timestamp" DESC, event_id DESC) AS rank
  FROM valued WHERE partials
),
minutes AS (
  SELECT tenant_id, environment_id, series, external_customer_id, minute AS bucket, count(*) AS n, sum(num) AS s, max(num) AS mx,
    max(num) FILTER (WHERE rank = 1) AS lv, max("timestamp") FILTER (WHERE rank = 1 AND num IS NOT NULL) AS la,
    max(event_id) FILTER (WHERE rank = 1 AND num IS NOT NULL) AS le
  FROM ranked
  GROUP BY series, external_customer_id, minute, tenant_id, environment_id
),
minutes_ranked AS (
  SELECT minutes.*, ${HOUR_OF('bucket')} AS hour, row_number() OVER (
    PARTITION BY series, external_customer_id, ${HOUR_OF('bucket')} ORDER BY la DESC NULLS LAST) AS rank
  FROM minutes
),
rolled_minutes AS (${upsertPartials(
  'usage_rollup_minutes',
  `SELECT tenant_id, environment_id, series, external_customer_id, bucket, n, s, mx, lv, la, le
  FROM minutes ORDER BY series, external_customer_id, bucket`,
)}
),
rolled AS (${upsertPartials(
  'usage_rollups',
  `SELECT tenant_id, environment_id, series, external_customer_id, hour, sum(n), sum(s), max(mx),
    max(lv) FILTER (WHERE rank = 1), max(la) FILTER (WHERE rank = 1), max(le) FILTER (WHERE rank = 1)
  FROM minutes_ranked
  GROUP BY series, external_customer_id, hour, tenant_id, environment_id
  ORDER BY series, external_customer_id, hour`,
)}
),
value_hours AS (
  SELECT tenant_id, environment_id, series, external_customer_id, hour, h, bit_or(${MINUTE_BIT('minute', 'hour')}) AS minutes
  FROM (SELECT v.*, sha256(convert_to(v.raw, 'UTF8')) AS h FROM valued v WHERE v.digests AND v.raw IS NOT NULL) x
  GROUP BY series, external_customer_id, hour, h, tenant_id, environment_id
),
rolled_value_hours AS (
  INSERT INTO usage_rollup_value_hours AS u (tenant_id, environment_id, series, external_customer_id, hour, value_sha256, minutes)
  SELECT tenant_id, environment_id, series, external_customer_id, hour, h, minutes FROM value_hours
  ORDER BY series, external_customer_id, hour, h
  ON CONFLICT (series, external_customer_id, hour, value_sha256) DO UPDATE SET minutes = u.minutes | excluded.minutes
    WHERE (u.minutes | excluded.minutes) <> u.minutes
  RETURNING 1
),
value_months AS (
  INSERT INTO usage_rollup_value_months AS u (tenant_id, environment_id, series, external_customer_id, month, value_sha256, hours)
  SELECT tenant_id, environment_id, series, external_customer_id, month, h, bit_or(${HOUR_BIT('hour', 'month')})
  FROM (SELECT vh.*, ${MONTH_OF('vh.hour')} AS month FROM value_hours vh) x
  GROUP BY series, external_customer_id, month, h, tenant_id, environment_id
  ORDER BY series, external_customer_id, month, h
  ON CONFLICT (series, external_customer_id, month, value_sha256) DO UPDATE SET hours = u.hours | excluded.hours
    WHERE (u.hours | excluded.hours) <> u.hours
  RETURNING 1
)`;
