import type { Express } from 'express';
import { entitlementApi } from '@billstream/contracts';
import { etagOf, HttpResult, mountRoute, type RequestContext } from '@billstream/http';
import type { Logger } from '@billstream/logger';
import type { Feature } from './domain';
import type { FeatureService } from './service';
import { toFeatureView } from './view';

const eventContextOf = (ctx: RequestContext) => ({ tenantId: ctx.tenantId, environmentId: ctx.environmentId, actor: ctx.actor, requestId: ctx.requestId });

/** A feature's view with its ETag (`"<version>"`), for If-Match on a later PUT. */
const featureAnswer = (f: Feature) => new HttpResult(toFeatureView(f), undefined, { ETag: etagOf(f.version) });

export function mountFeatureRoutes(app: Express, features: FeatureService, logger: Logger): void {
  mountRoute(
    app,
    entitlementApi.createFeature,
    async ({ body, ctx }) =>
      featureAnswer(
        await features.create(eventContextOf(ctx), {
          name: body.name,
          lookupKey: body.lookup_key,
          type: body.type,
          meterId: body.meter_id ?? null,
          description: body.description ?? null,
          metadata: body.metadata ?? {},
        }),
      ),
    logger,
  );
  mountRoute(
    app,
    entitlementApi.listFeatures,
    async ({ query, ctx }) => {
      const page = await features.list(ctx, { status: query.status, type: query.type, lookupKey: query.lookup_key, limit: query.limit, offset: query.offset });
      return { items: page.items.map(toFeatureView), pagination: { total: page.total, limit: query.limit, offset: query.offset } };
    },
    logger,
  );
  mountRoute(app, entitlementApi.getFeature, async ({ params, ctx }) => featureAnswer(await features.get(ctx, params.id)), logger);
  mountRoute(
    app,
    entitlementApi.updateFeature,
    async ({ params, body, ctx, req }) =>
      featureAnswer(await features.update(eventContextOf(ctx), params.id, { name: body.name, description: body.description, metadata: body.metadata }, req.header('if-match'))),
    logger,
  );
  mountRoute(app, entitlementApi.archiveFeature, async ({ params, ctx }) => features.archive(eventContextOf(ctx), params.id), logger);
}
