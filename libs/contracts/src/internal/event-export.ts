import { z } from 'zod';
import { isoTimestamp } from '../common';
import { defineRoute } from '../routes';
import { storedEventSchema } from '../usage-events';

/**
 * Internal endpoint of the ingestion-aggregator that the billing service's export tasks read
 * events through (ADR 0019): one keyset page of the caller's events, oldest first by
 * (timestamp, event_id), after a cursor. Not public: NOT in ALL_ROUTES (the gateway does not
 * route it, the OpenAPI document does not show it); mounted behind the internal token.
 */
export const MAX_EXPORT_PAGE = 20_000;

export const eventExportPageBody = z.strictObject({
  start_time: isoTimestamp.optional(),
  end_time: isoTimestamp.optional(),
  external_customer_id: z.string().min(1).max(255).optional(),
  /** The last event of the previous page: its timestamp (as answered, microseconds) and id. */
  after: z.strictObject({ timestamp: isoTimestamp, event_id: z.string().min(1).max(255) }).nullable().optional(),
  limit: z.number().int().min(1).max(MAX_EXPORT_PAGE).default(5000),
});
export type EventExportPageBody = z.output<typeof eventExportPageBody>;

export const eventExportPageSchema = z.object({
  /** Items of the events query (`POST /v1/events/query`): the same view, `id` included. */
  events: z.array(storedEventSchema),
  /** The cursor of the next page; null when this page is the last. */
  next: z.object({ timestamp: z.string(), event_id: z.string() }).nullable(),
});
export type EventExportPage = z.infer<typeof eventExportPageSchema>;

export const eventExportApi = {
  exportPage: defineRoute({
    operationId: 'internalEventExportPage',
    method: 'post',
    path: '/internal/v1/events/export-page',
    service: 'ingestion-aggregator',
    permission: 'events:read',
    summary: 'One keyset page of events for an export task (internal)',
    tag: 'Internal',
    body: eventExportPageBody,
    response: eventExportPageSchema,
    status: 200,
  }),
};
