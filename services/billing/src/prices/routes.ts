import type { Express } from 'express';
import { billingApi } from '@billstream/contracts';
import { mountRoute } from '@billstream/http';
import type { Logger } from '@billstream/logger';
import type { PriceService } from './service';
import { newPriceOf, toPriceView } from './view';

export function mountPriceRoutes(app: Express, prices: PriceService, logger: Logger): void {
  mountRoute(
    app,
    billingApi.createPrice,
    async ({ body, ctx }) => toPriceView(await prices.create(ctx, body.plan_id, newPriceOf(body), ctx.requestId)),
    logger,
  );
  mountRoute(app, billingApi.getPrice, async ({ params, ctx }) => toPriceView(await prices.get(ctx, params.id)), logger);
  mountRoute(app, billingApi.archivePrice, async ({ params, ctx }) => prices.archive(ctx, params.id), logger);
}
