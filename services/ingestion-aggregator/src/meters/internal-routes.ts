import type { Express } from 'express';
import { ingestionInternalApi, normalizeEventTimestamp } from '@billstream/contracts';
import { mountRoute } from '@billstream/http';
import type { Logger } from '@billstream/logger';
import type { MeterService } from './service';

/**
 * The internal routes the billing service calls (not in ALL_ROUTES: the gateway does not route
 * them). Mounted like the public ones, behind the internal token and tenant headers.
 */
export function mountMeterInternalRoutes(app: Express, meters: MeterService, logger: Logger): void {
  mountRoute(
    app,
    ingestionInternalApi.usageBatch,
    async ({ body, ctx }) => {
      const values = await meters.usageBatch(
        ctx,
        body.queries.map((q) => ({
          meterId: q.meter_id,
          externalCustomerId: q.external_customer_id,
          from: normalizeEventTimestamp(q.start_time),
          to: normalizeEventTimestamp(q.end_time),
          extraFilters: Object.entries(q.filter_values ?? {}).map(([key, values]) => ({ key, values })),
        })),
      );
      return { values: values.map((v) => ({ meter_id: v.meterId, external_customer_id: v.externalCustomerId, value: v.value })) };
    },
    logger,
  );
}
