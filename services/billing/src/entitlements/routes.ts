import type { Express } from 'express';
import { entitlementApi } from '@billstream/contracts';
import { etagOf, HttpResult, mountRoute, type RequestContext } from '@billstream/http';
import type { Logger } from '@billstream/logger';
import type { Entitlement, GrantInput } from './domain';
import type { EntitlementService } from './service';
import { toEntitlementView } from './view';

const eventContextOf = (ctx: RequestContext) => ({ tenantId: ctx.tenantId, environmentId: ctx.environmentId, actor: ctx.actor, requestId: ctx.requestId });

const grantOf = (b: { is_enabled?: boolean; usage_limit?: string | null; usage_reset_period?: GrantInput['usageResetPeriod']; is_soft_limit?: boolean; static_value?: string | null }): GrantInput => ({
  isEnabled: b.is_enabled,
  usageLimit: b.usage_limit,
  usageResetPeriod: b.usage_reset_period,
  isSoftLimit: b.is_soft_limit,
  staticValue: b.static_value,
});

/** An entitlement's view with its ETag (`"<version>"`), for If-Match on a later PUT. */
const entitlementAnswer = (e: Entitlement) => new HttpResult(toEntitlementView(e), undefined, { ETag: etagOf(e.version) });

/** The entitlement catalog's writes and reads; the check and a customer's entitlements are the entitlements service's (ADR 0061). */
export function mountEntitlementRoutes(app: Express, entitlements: EntitlementService, logger: Logger): void {
  mountRoute(
    app,
    entitlementApi.createEntitlement,
    async ({ body, ctx }) => entitlementAnswer(await entitlements.create(eventContextOf(ctx), body.plan_id, body.feature_id, grantOf(body))),
    logger,
  );
  mountRoute(
    app,
    entitlementApi.listEntitlements,
    async ({ query, ctx }) => {
      const page = await entitlements.list(ctx, { planId: query.plan_id, featureId: query.feature_id, limit: query.limit, offset: query.offset });
      return { items: page.items.map(toEntitlementView), pagination: { total: page.total, limit: query.limit, offset: query.offset } };
    },
    logger,
  );
  mountRoute(app, entitlementApi.getEntitlement, async ({ params, ctx }) => entitlementAnswer(await entitlements.get(ctx, params.id)), logger);
  mountRoute(
    app,
    entitlementApi.updateEntitlement,
    async ({ params, body, ctx, req }) => entitlementAnswer(await entitlements.update(eventContextOf(ctx), params.id, grantOf(body), req.header('if-match'))),
    logger,
  );
  mountRoute(app, entitlementApi.deleteEntitlement, async ({ params, ctx }) => entitlements.delete(eventContextOf(ctx), params.id), logger);

}
