import type { Express } from 'express';
import { usageEventApi } from '@billstream/contracts';
import { mountRoute, type RouteHandler } from '@billstream/http';
import type { Logger } from '@billstream/logger';
import type { MonitoringService } from './service';

const { monitoring: monitoringRoute, eventsHourly } = usageEventApi;

export function mountMonitoringRoutes(app: Express, monitoring: MonitoringService, logger: Logger): void {
  const handler: RouteHandler<typeof monitoringRoute> = async ({ ctx }) => {
    const m = await monitoring.monitor({ tenantId: ctx.tenantId, environmentId: ctx.environmentId });
    return {
      total_events: m.totalEvents,
      last_event_at: m.lastEventAt?.toISOString() ?? null,
      consumer_lag: m.consumerLag,
      dead_lettered_events: m.deadLetteredEvents,
    };
  };
  mountRoute(app, monitoringRoute, handler, logger);

  const hourly: RouteHandler<typeof eventsHourly> = async ({ ctx, query }) => {
    const since = new Date(Math.floor((Date.now() - query.hours * 3_600_000) / 3_600_000) * 3_600_000 + 3_600_000);
    const hours = await monitoring.hourly({ tenantId: ctx.tenantId, environmentId: ctx.environmentId }, since);
    return { since: since.toISOString(), hours: hours.map((h) => ({ hour: h.hour.toISOString(), events: h.events })) };
  };
  mountRoute(app, eventsHourly, hourly, logger);
}
