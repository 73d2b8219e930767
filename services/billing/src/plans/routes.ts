import type { Express } from 'express';
import { billingApi } from '@billstream/contracts';
import { etagOf, HttpResult, mountRoute } from '@billstream/http';
import type { Logger } from '@billstream/logger';
import { newPriceOf } from '../prices/view';
import type { PlanService } from './service';
import type { PlanWithPrices } from './domain';
import { toPlanView } from './view';

/** The plan's view with its ETag (`"<version>"`), for If-Match on a later PUT. */
const withEtag = (p: PlanWithPrices) => new HttpResult(toPlanView(p), undefined, { ETag: etagOf(p.version) });

export function mountPlanRoutes(app: Express, plans: PlanService, logger: Logger): void {
  mountRoute(
    app,
    billingApi.createPlan,
    async ({ body, ctx }) =>
      withEtag(
        await plans.create(
          ctx,
          {
            name: body.name,
            lookupKey: body.lookup_key ?? null,
            description: body.description ?? null,
            metadata: body.metadata ?? {},
            prices: (body.prices ?? []).map(newPriceOf),
            taxRateIds: body.tax_rate_ids ?? [],
          },
          ctx.requestId,
        ),
      ),
    logger,
  );
  mountRoute(
    app,
    billingApi.listPlans,
    async ({ query, ctx }) => {
      const page = await plans.list(ctx, { status: query.status, lookupKey: query.lookup_key, limit: query.limit, offset: query.offset });
      return { items: page.items.map(toPlanView), pagination: { total: page.total, limit: query.limit, offset: query.offset } };
    },
    logger,
  );
  mountRoute(app, billingApi.getPlan, async ({ params, ctx }) => withEtag(await plans.get(ctx, params.id)), logger);
  mountRoute(
    app,
    billingApi.updatePlan,
    async ({ params, body, ctx, req }) =>
      withEtag(await plans.update(ctx, params.id, { name: body.name, description: body.description, metadata: body.metadata, taxRateIds: body.tax_rate_ids }, req.header('if-match'))),
    logger,
  );
  mountRoute(app, billingApi.archivePlan, async ({ params, ctx }) => plans.archive(ctx, params.id), logger);
}
