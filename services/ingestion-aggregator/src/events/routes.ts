import type { Express } from 'express';
import { eventExportApi, normalizeEventTimestamp, usageEventApi, type EventQueryBody } from '@billstream/contracts';
import type { Db } from '@billstream/db';
import { mountRoute, type RouteHandler } from '@billstream/http';
import type { Logger } from '@billstream/logger';
import type { EventFilter, EventStore, StoredEvent } from './store';

const { query: queryRoute } = usageEventApi;

function later(a: string | undefined, b: string | undefined): string | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return a > b ? a : b;
}

function earlier(a: string | undefined, b: string | undefined): string | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return a < b ? a : b;
}

const norm = (v: string | undefined) => (v === undefined ? undefined : normalizeEventTimestamp(v));

/** Both filter forms of the spec: top-level start/end and `filters.timestamp_gte/lt` (combined with AND). */
export function toFilter(body: EventQueryBody): EventFilter {
  return {
    externalCustomerId: body.external_customer_id,
    eventName: body.event_name,
    from: later(norm(body.start_time), norm(body.filters?.timestamp_gte)),
    to: earlier(norm(body.end_time), norm(body.filters?.timestamp_lt)),
  };
}

export function toView(e: StoredEvent) {
  return {
    id: e.eventId,
    event_name: e.eventName,
    external_customer_id: e.externalCustomerId,
    customer_id: e.customerId,
    timestamp: e.timestamp,
    properties: e.properties,
    source: e.source,
  };
}

export function mountEventRoutes(app: Express, db: Db, store: EventStore, logger: Logger): void {
  const query: RouteHandler<typeof queryRoute> = async ({ body, ctx }) => {
    const scope = { tenantId: ctx.tenantId, environmentId: ctx.environmentId };
    const { events, total } = await store.query(db, scope, toFilter(body), body.page_size, body.offset);
    return { events: events.map(toView), has_more: body.offset + events.length < total, total_count: total };
  };
  mountRoute(app, queryRoute, query, logger);

  // Internal (ADR 0019): the billing service's export tasks page through events with it.
  const exportPage: RouteHandler<typeof eventExportApi.exportPage> = async ({ body, ctx }) => {
    const scope = { tenantId: ctx.tenantId, environmentId: ctx.environmentId };
    const filter: EventFilter = { externalCustomerId: body.external_customer_id, from: norm(body.start_time), to: norm(body.end_time) };
    const after = body.after ? { timestamp: normalizeEventTimestamp(body.after.timestamp), eventId: body.after.event_id } : null;
    const events = await store.exportPage(db, scope, filter, after, body.limit);
    const last = events[events.length - 1];
    return {
      events: events.map(toView),
      next: last && events.length === body.limit ? { timestamp: last.timestamp, event_id: last.eventId } : null,
    };
  };
  mountRoute(app, eventExportApi.exportPage, exportPage, logger);
}
