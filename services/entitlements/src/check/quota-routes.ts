import type { Express } from 'express';
import { entitlementsQuotaInternalApi } from '@billstream/contracts';
import type { Db } from '@billstream/db';
import { NotFoundError } from '@billstream/errors';
import { mountRoute } from '@billstream/http';
import type { Logger } from '@billstream/logger';
import type { ProjectionStore } from '../projection/store';
import type { CustomerAccess } from './access';

const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);

/**
 * `POST /internal/v1/entitlements/quota` (ADR 0070): what the wallet's hold of a METERED
 * entitlement may take, the check's limit and usage with holds left out (the wallet counts
 * them under its lock).
 */
export function mountQuotaRoutes(app: Express, db: Db, projection: ProjectionStore, access: CustomerAccess, logger: Logger): void {
  mountRoute(
    app,
    entitlementsQuotaInternalApi.quota,
    async ({ body, ctx }) => {
      const [feature] = await projection.features(db, ctx, [body.feature_id]);
      if (!feature || feature.status !== 'active') throw new NotFoundError(`Feature ${body.feature_id} not found`, { field: 'feature_id', feature_id: body.feature_id });
      const r = await access.check(ctx, { id: body.customer_id }, feature.lookupKey, '0', ctx.requestId, { countHolds: false });
      return {
        feature_id: feature.id,
        external_customer_id: r.externalCustomerId,
        feature_lookup_key: feature.lookupKey,
        type: feature.type,
        meter_id: feature.meterId,
        // METERED: usage is read only for an enabled grant.
        is_enabled: r.usage !== null,
        limit: r.limit,
        usage: r.usage,
        is_soft_limit: r.isSoftLimit,
        entitlement_ids: r.entitlementIds,
        period_start: iso(r.window?.start),
        period_end: iso(r.window?.end),
      };
    },
    logger,
  );
}
