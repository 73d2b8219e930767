import type { Express } from 'express';
import { webhookApi } from '@billstream/contracts';
import { mountRoute } from '@billstream/http';
import type { Logger } from '@billstream/logger';
import { toDeliveryView, type DeliveryService } from './service';

export function mountDeliveryRoutes(app: Express, deliveries: DeliveryService, logger: Logger): void {
  mountRoute(
    app,
    webhookApi.test,
    async ({ params, body, ctx }) => toDeliveryView(await deliveries.sendTest(ctx, params.id, body.event_name)),
    logger,
  );
  mountRoute(
    app,
    webhookApi.deliveries,
    async ({ params, query, ctx }) => {
      const { items, total } = await deliveries.list(
        ctx,
        params.id,
        { status: query.status, eventId: query.event_id },
        query.limit,
        query.offset,
      );
      return { deliveries: items.map(toDeliveryView), pagination: { total, limit: query.limit, offset: query.offset } };
    },
    logger,
  );
  mountRoute(app, webhookApi.failures, async ({ query, ctx }) => deliveries.failures(ctx, query.hours), logger);
  mountRoute(app, webhookApi.resend, async ({ params, ctx }) => toDeliveryView(await deliveries.resend(ctx, params.id, params.delivery_id)), logger);
}
