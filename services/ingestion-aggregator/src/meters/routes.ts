import type { Express } from 'express';
import { normalizeEventTimestamp, usageEventApi } from '@billstream/contracts';
import { mountRoute, type RouteHandler } from '@billstream/http';
import type { Logger } from '@billstream/logger';
import type { MeterService } from './service';
import type { Meter } from './store';

const { createMeter: createRoute, listMeters: listRoute, getMeter: getRoute, meterUsage: usageRoute } = usageEventApi;

export function toView(m: Meter) {
  return {
    id: m.id,
    name: m.name,
    event_name: m.eventName,
    aggregation: { type: m.aggregationType, field: m.aggregationField },
    filters: m.filters,
    tenant_id: m.tenantId,
    environment_id: m.environmentId,
    created_at: m.createdAt.toISOString(),
    updated_at: m.updatedAt.toISOString(),
  };
}

export function mountMeterRoutes(app: Express, meters: MeterService, logger: Logger): void {
  const create: RouteHandler<typeof createRoute> = async ({ body, ctx }) =>
    toView(
      await meters.create(ctx, {
        name: body.name,
        eventName: body.event_name,
        aggregationType: body.aggregation.type,
        aggregationField: body.aggregation.field,
        filters: body.filters ?? [],
      }),
    );
  const list: RouteHandler<typeof listRoute> = async ({ query, ctx }) => {
    const { items, total } = await meters.list(ctx, query.limit, query.offset);
    return { items: items.map(toView), pagination: { total, limit: query.limit, offset: query.offset } };
  };
  const get: RouteHandler<typeof getRoute> = async ({ params, ctx }) => toView(await meters.get(ctx, params.id));
  const usage: RouteHandler<typeof usageRoute> = async ({ params, body, ctx }) => {
    const result = await meters.usage(ctx, params.id, {
      externalCustomerId: body.external_customer_id,
      from: normalizeEventTimestamp(body.start_time),
      to: normalizeEventTimestamp(body.end_time),
      windowSize: body.window_size,
      extraFilters: Object.entries(body.filter_values ?? {}).map(([key, values]) => ({ key, values })),
    });
    return { meter_id: result.meterId, value: result.value, windows: result.windows };
  };
  mountRoute(app, createRoute, create, logger);
  mountRoute(app, listRoute, list, logger);
  mountRoute(app, getRoute, get, logger);
  mountRoute(app, usageRoute, usage, logger);
}
