import { z } from 'zod';
import { isoTimestamp, listResponse, paginationQuery } from './common';
import { defineRoute, type RouteDef } from './routes';

/** Usage events and meters (issue #5). */

/** Postgres text and jsonb cannot hold NUL characters. */
const hasNoNul = (v: string) => !v.includes('\u0000');

const boundedText = (max: number) =>
  z.string().min(1, 'must not be empty').max(max, `must be at most ${max} characters`).refine(hasNoNul, 'must not contain NUL characters');

export const USAGE_EVENT_MIN_YEAR = 1970;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Whether `v` starts with a real calendar date (yyyy-mm-dd), by arithmetic: this runs for every event. */
function isCalendarDate(v: string): boolean {
  const year = Number(v.slice(0, 4));
  const month = Number(v.slice(5, 7));
  const day = Number(v.slice(8, 10));
  if (!(month >= 1 && month <= 12 && day >= 1)) return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return day <= (month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1]);
}

/** Whether `hh:mm:ss` at offset 11 of `v` is an ordinary time of day (no 24:00, no leap second). */
function isPlainTime(v: string): boolean {
  return v.slice(11, 13) <= '23' && v.slice(14, 16) <= '59' && v.slice(17, 19) <= '59';
}

/** An event timestamp: ISO 8601 with a zone, up to 9 fraction digits, from 1970 on. */
export const eventTimestamp = isoTimestamp
  .refine(isCalendarDate, 'is not a calendar date')
  .refine((v) => Number(v.slice(0, 4)) >= USAGE_EVENT_MIN_YEAR, `must not be before ${USAGE_EVENT_MIN_YEAR}`);

export const eventProperties = z
  .record(z.string(), z.unknown(), { error: 'must be an object' })
  .refine((p) => !JSON.stringify(p).includes('\\u0000'), 'must not contain NUL characters');

/** One usage event as a client sends it (spec "Usage event (ingested)"). */
export const usageEventInput = z.strictObject({
  event_name: boundedText(255),
  external_customer_id: boundedText(255),
  timestamp: eventTimestamp,
  properties: eventProperties.optional(),
  event_id: boundedText(255)
    .describe(
      'Your id of the event, unique per tenant and environment; a later copy is accepted and ignored. Always send one: after a 503 or a timeout the event is not known to be stored, and only a retry with the same id cannot count it twice',
    )
    .optional(),
  customer_id: boundedText(255).optional(),
  source: boundedText(255).optional(),
});
export type UsageEventInput = z.infer<typeof usageEventInput>;

export const MAX_EVENTS_PER_BULK = 1000;

/**
 * Each element is checked against `usageEventInput` by the gateway handler, so that a bad
 * event is reported with its index (`details.index`) and field (`details.field`).
 */
export const bulkEventsBody = z.strictObject({
  events: z
    .array(z.unknown(), { error: 'must be an array of usage events' })
    .min(1, 'must hold at least one event')
    .max(MAX_EVENTS_PER_BULK, `must hold at most ${MAX_EVENTS_PER_BULK} events`)
    .describe('1 to 1,000 usage events, each with the fields of POST /v1/events'),
});

export const eventAcceptedSchema = z.object({ message: z.string(), event_id: z.string() });
export const bulkAcceptedSchema = z.object({ message: z.string(), event_ids: z.array(z.string()) });

const pageSize = z
  .number({ error: 'must be an integer' })
  .int('must be an integer')
  .min(1, 'must be between 1 and 1000')
  .max(1000, 'must be between 1 and 1000');

export const eventQueryBody = z.strictObject({
  external_customer_id: boundedText(255).optional(),
  event_name: boundedText(255).optional(),
  start_time: isoTimestamp.optional(),
  end_time: isoTimestamp.optional(),
  filters: z
    .strictObject({ timestamp_gte: isoTimestamp.optional(), timestamp_lt: isoTimestamp.optional() })
    .optional(),
  page_size: pageSize.default(50),
  offset: z.number({ error: 'must be an integer' }).int('must be an integer').min(0, 'must be 0 or more').default(0),
});
export type EventQueryBody = z.infer<typeof eventQueryBody>;

export const storedEventSchema = z.object({
  id: z.string(),
  event_name: z.string(),
  external_customer_id: z.string(),
  customer_id: z.string().nullable(),
  timestamp: z.string(),
  properties: z.record(z.string(), z.unknown()),
  source: z.string().nullable(),
});

export const eventQueryResponse = z.object({
  events: z.array(storedEventSchema),
  has_more: z.boolean(),
  total_count: z.number().int(),
});

export const monitoringResponse = z.object({
  total_events: z.number().int(),
  last_event_at: z.string().nullable(),
  consumer_lag: z.number().int(),
  dead_lettered_events: z
    .number()
    .int()
    .describe('Records of the caller tenant and environment that could never be stored and are held in the dead-letter table'),
});

/** `GET /v1/reports/events_hourly`: the last `hours` (1 to 720, default 24). */
export const eventsHourlyQuery = z.strictObject({
  hours: z.coerce.number().int('must be a whole number of hours').min(1, 'must be 1 or more').max(720, 'must be at most 720 (30 days)').default(24),
});

export const eventsHourlyResponse = z.object({
  since: z.string().describe('The start of the first hour counted (UTC, on the hour)'),
  hours: z.array(z.object({ hour: z.string(), events: z.number().int() })).describe('Hours with stored events, oldest first; an hour with none has no row'),
});

export const AGGREGATION_TYPES = ['COUNT', 'SUM', 'MAX', 'UNIQUE_COUNT', 'LATEST'] as const;
export type AggregationType = (typeof AGGREGATION_TYPES)[number];

const propertyName = z
  .string()
  .min(1, 'must not be empty')
  .max(255, 'must be at most 255 characters')
  .refine(hasNoNul, 'must not contain NUL characters');

export const meterFilterSchema = z.strictObject({
  key: propertyName,
  values: z.array(boundedText(255)).min(1, 'must hold at least one value').max(100, 'must hold at most 100 values'),
});

export const createMeterBody = z
  .strictObject({
    name: boundedText(255),
    event_name: boundedText(255),
    aggregation: z.strictObject({
      type: z.enum(AGGREGATION_TYPES, { error: `must be one of ${AGGREGATION_TYPES.join(', ')}` }),
      field: propertyName.optional(),
    }),
    filters: z.array(meterFilterSchema).max(20, 'must hold at most 20 filters').optional(),
  })
  .superRefine((body, ctx) => {
    if (body.aggregation.type !== 'COUNT' && body.aggregation.field === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['aggregation', 'field'],
        message: `is required for ${body.aggregation.type}`,
      });
    }
  });

export const meterSchema = z.object({
  id: z.string(),
  name: z.string(),
  event_name: z.string(),
  aggregation: z.object({ type: z.enum(AGGREGATION_TYPES), field: z.string().nullable() }),
  filters: z.array(z.object({ key: z.string(), values: z.array(z.string()) })),
  tenant_id: z.string(),
  environment_id: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
});

export const WINDOW_SIZES = ['HOUR', 'DAY'] as const;
export type WindowSize = (typeof WINDOW_SIZES)[number];

export const meterUsageBody = z
  .strictObject({
    external_customer_id: boundedText(255),
    start_time: isoTimestamp,
    end_time: isoTimestamp,
    window_size: z.enum(WINDOW_SIZES, { error: 'must be HOUR or DAY' }).optional(),
    filter_values: z
      .record(propertyName, z.array(z.string().max(2000, 'must be at most 2000 characters').refine(hasNoNul, 'must not contain NUL characters')).min(1, 'must hold at least one value').max(100, 'must hold at most 100 values'))
      .refine((f) => Object.keys(f).length <= 20, 'must hold at most 20 properties')
      .optional()
      .describe("Extra filters on top of the meter's: an event counts when each named property is one of its values (a price's filter_values)"),
  })
  .superRefine((body, ctx) => {
    if (Date.parse(body.end_time) <= Date.parse(body.start_time)) {
      ctx.addIssue({ code: 'custom', path: ['end_time'], message: 'must be after start_time' });
    }
  });

export const meterUsageResponse = z.object({
  meter_id: z.string(),
  value: z.string(),
  windows: z.array(z.object({ start: z.string(), end: z.string(), value: z.string() })),
});

const meterIdParams = z.strictObject({ id: z.string().min(1) });

export const usageEventApi = {
  ingest: defineRoute({
    operationId: 'ingestEvent',
    method: 'post',
    path: '/v1/events',
    service: 'gateway',
    permission: 'events:write',
    summary: 'Ingest one usage event; 202 once Kafka acknowledged it (acks=all)',
    tag: 'Usage events',
    body: usageEventInput,
    response: eventAcceptedSchema,
    status: 202,
    errors: [503],
  }),
  ingestBulk: defineRoute({
    operationId: 'ingestEventsBulk',
    method: 'post',
    path: '/v1/events/bulk',
    service: 'gateway',
    permission: 'events:write',
    summary: 'Ingest up to 1,000 usage events at once; one bad event refuses the whole request',
    tag: 'Usage events',
    body: bulkEventsBody,
    response: bulkAcceptedSchema,
    status: 202,
    errors: [413, 503],
    bodyLimitBytes: 5 * 1024 * 1024,
  }),
  query: defineRoute({
    operationId: 'queryEvents',
    method: 'post',
    path: '/v1/events/query',
    service: 'ingestion-aggregator',
    permission: 'events:read',
    summary: 'Stored usage events, newest first, filtered by customer, name and time',
    tag: 'Usage events',
    body: eventQueryBody,
    response: eventQueryResponse,
    status: 200,
  }),
  monitoring: defineRoute({
    operationId: 'eventMonitoring',
    method: 'get',
    path: '/v1/events/monitoring',
    service: 'ingestion-aggregator',
    permission: 'events:read',
    summary: 'Stored event count, last event time, consumer lag and dead-lettered records of the caller tenant and environment',
    tag: 'Usage events',
    query: z.strictObject({}),
    response: monitoringResponse,
    status: 200,
  }),
  eventsHourly: defineRoute({
    operationId: 'getEventsHourly',
    method: 'get',
    path: '/v1/reports/events_hourly',
    service: 'ingestion-aggregator',
    permission: 'events:read',
    summary: 'Events stored per UTC hour of receipt over the last `hours` (default 24), kept per stored batch so the events are never counted',
    tag: 'Usage events',
    query: eventsHourlyQuery,
    response: eventsHourlyResponse,
    status: 200,
  }),
  createMeter: defineRoute({
    operationId: 'createMeter',
    method: 'post',
    path: '/v1/meters',
    service: 'ingestion-aggregator',
    permission: 'meters:write',
    summary: 'Create a meter: which events it counts and how it aggregates them',
    tag: 'Meters',
    body: createMeterBody,
    response: meterSchema,
    status: 201,
  }),
  listMeters: defineRoute({
    operationId: 'listMeters',
    method: 'get',
    path: '/v1/meters',
    service: 'ingestion-aggregator',
    permission: 'meters:read',
    summary: 'List the meters, oldest first',
    tag: 'Meters',
    query: z.strictObject({ ...paginationQuery }),
    response: listResponse(meterSchema),
    status: 200,
  }),
  getMeter: defineRoute({
    operationId: 'getMeter',
    method: 'get',
    path: '/v1/meters/:id',
    service: 'ingestion-aggregator',
    permission: 'meters:read',
    summary: 'One meter',
    tag: 'Meters',
    params: meterIdParams,
    response: meterSchema,
    status: 200,
    errors: [404],
  }),
  meterUsage: defineRoute({
    operationId: 'meterUsage',
    method: 'post',
    path: '/v1/meters/:id/usage',
    service: 'ingestion-aggregator',
    permission: 'meters:read',
    summary: "A customer's usage through a meter over a time range, optionally in hourly or daily windows",
    tag: 'Meters',
    params: meterIdParams,
    body: meterUsageBody,
    response: meterUsageResponse,
    status: 200,
    errors: [404],
  }),
};

export const usageEventRoutes: RouteDef[] = Object.values(usageEventApi) as RouteDef[];

/**
 * The message on the usage-events topic (gateway -> ingestion-aggregator), keyed by
 * `${tenant_id}:${environment_id}:${external_customer_id}`. `timestamp` is normalised by
 * the gateway to UTC with microseconds (`2026-01-02T03:04:05.123456Z`).
 */
export const usageEventMessageSchema = z.object({
  tenant_id: z.string().min(1),
  environment_id: z.string().min(1),
  event_id: z.string().min(1),
  event_name: z.string().min(1),
  external_customer_id: z.string().min(1),
  timestamp: z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/),
  properties: z.record(z.string(), z.unknown()),
  source: z.string().nullable(),
  received_at: z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$/),
});
export type UsageEventMessage = z.infer<typeof usageEventMessageSchema>;

/**
 * The message on the usage-recorded topic (ingestion-aggregator -> billing): usage events of
 * this customer were stored (committed) by `stored_at`. Keyed like usage events. A hint only:
 * billing recomputes the customer's unbilled usage from the stored events (ADR 0024).
 */
export const usageRecordedMessageSchema = z.object({
  tenant_id: z.string().min(1),
  environment_id: z.string().min(1),
  external_customer_id: z.string().min(1),
  stored_at: z.string(),
});
export type UsageRecordedMessage = z.infer<typeof usageRecordedMessageSchema>;

/**
 * Also on the usage-recorded topic: notifications may have been missed before `stored_at` (an
 * aggregator replica joined the usage consumer group, so a predecessor may have died between
 * a commit and its notifications). A holder of usage read before it reads again (ADR 0026).
 */
export const usageResetMessageSchema = z.object({ reset: z.literal(true), stored_at: z.string() });
export type UsageResetMessage = z.infer<typeof usageResetMessageSchema>;
/** The key of `UsageResetMessage`s (no customer key has this form: theirs hold two colons). */
export const USAGE_RESET_KEY = 'reset';

const TIMESTAMP_PARTS = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:?\d{2})$/;

/**
 * An accepted event timestamp in UTC with microseconds (Postgres precision; digits beyond
 * the sixth are dropped), e.g. `2026-01-02T01:04:05.123456Z` for `2026-01-02T03:04:05.1234567+02:00`.
 */
export function normalizeEventTimestamp(value: string): string {
  const m = TIMESTAMP_PARTS.exec(value);
  if (!m) throw new Error(`not an ISO 8601 timestamp with a zone: ${value}`);
  const micros = (m[2] ?? '').padEnd(6, '0').slice(0, 6);
  if (!isCalendarDate(m[1])) throw new Error(`not a calendar date: ${value}`);
  // Already UTC with an ordinary time of day: the text is its own normal form.
  if (m[3] === 'Z' && isPlainTime(m[1])) return `${m[1]}.${micros}Z`;
  const zone = m[3] === 'Z' ? 'Z' : `${m[3].slice(0, 3)}:${m[3].slice(-2)}`;
  const seconds = Date.parse(`${m[1]}${zone}`);
  if (Number.isNaN(seconds)) throw new Error(`not a valid date: ${value}`);
  return `${new Date(seconds).toISOString().slice(0, 19)}.${micros}Z`;
}
