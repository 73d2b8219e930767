import type { Express } from 'express';
import { entitlementApi, pageOf } from '@billstream/contracts';
import { mountRoute } from '@billstream/http';
import { recordCheck } from '@billstream/observability';
import type { Logger } from '@billstream/logger';
import type { CustomerAccess } from './access';

const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);

/** `GET /v1/customers/{id}/entitlements` and `POST /v1/entitlements/check` (docs/api/entitlements.md). */
export function mountCheckRoutes(app: Express, access: CustomerAccess, logger: Logger): void {
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
      recordCheck(r.allowed);
      return {
        allowed: r.allowed,
        feature_lookup_key: r.feature.lookupKey,
        type: r.feature.type,
        usage: r.usage,
        held: r.held,
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
