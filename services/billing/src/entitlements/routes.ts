import type { Express } from 'express';
import { entitlementApi, pageOf } from '@billstream/contracts';
import { etagOf, HttpResult, mountRoute, type RequestContext } from '@billstream/http';
import type { Logger } from '@billstream/logger';
import type { Entitlement, GrantInput } from './domain';
import type { CustomerAccess } from './access';
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

const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);

/** An entitlement's view with its ETag (`"<version>"`), for If-Match on a later PUT. */
const entitlementAnswer = (e: Entitlement) => new HttpResult(toEntitlementView(e), undefined, { ETag: etagOf(e.version) });

export function mountEntitlementRoutes(app: Express, entitlements: EntitlementService, access: CustomerAccess, logger: Logger): void {
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

  mountRoute(
    app,
    entitlementApi.customerEntitlements,
    async ({ params, query, ctx }) =>
      pageOf(
        (await access.ofCustomer(ctx, params.id, ctx.requestId)).map((c) => ({
          feature_id: c.feature.id,
          feature_lookup_key: c.feature.lookupKey,
          type: c.feature.type,
          is_enabled: c.isEnabled,
          usage_limit: c.usageLimit,
          usage: c.usage,
          is_soft_limit: c.isSoftLimit,
          static_value: c.staticValue,
          usage_reset_period: c.usageResetPeriod,
          period_start: iso(c.window?.start),
          period_end: iso(c.window?.end),
          sources: c.sources.map((s) => ({ subscription_id: s.subscription.id, entitlement_id: s.entitlement.id })),
        })),
        query,
      ),
    logger,
  );
  mountRoute(
    app,
    entitlementApi.checkEntitlement,
    async ({ body, ctx }) => {
      const ref = body.customer_id !== undefined ? { id: body.customer_id } : { externalId: body.external_customer_id! };
      const r = await access.check(ctx, ref, body.feature_lookup_key, body.quantity, ctx.requestId);
      return {
        allowed: r.allowed,
        feature_lookup_key: r.feature.lookupKey,
        type: r.feature.type,
        usage: r.usage,
        limit: r.limit,
        remaining: r.remaining,
        is_soft_limit: r.isSoftLimit,
        period_start: iso(r.window?.start),
        period_end: iso(r.window?.end),
      };
    },
    logger,
  );
}
