import type { Express } from 'express';
import { taxRateApi, type TaxRateResponse } from '@billstream/contracts';
import { mountRoute } from '@billstream/http';
import type { Logger } from '@billstream/logger';
import type { TaxRateService } from './service';
import type { TaxRate } from './store';

export function toTaxRateView(t: TaxRate): TaxRateResponse {
  return {
    id: t.id,
    code: t.code,
    name: t.name,
    percentage: t.percentage,
    tax_type: t.taxType,
    country: t.country,
    region: t.region,
    description: t.description,
    active: t.active,
    created_at: t.createdAt.toISOString(),
    updated_at: t.updatedAt.toISOString(),
    tenant_id: t.tenantId,
    environment_id: t.environmentId,
  };
}

/** `/v1/tax_rates` (docs/api/taxes.md): handlers map the wire to the service's inputs. */
export function mountTaxRateRoutes(app: Express, rates: TaxRateService, logger: Logger): void {
  mountRoute(
    app,
    taxRateApi.createTaxRate,
    async ({ body, ctx }) =>
      toTaxRateView(
        await rates.create(ctx, {
          code: body.code,
          name: body.name,
          percentage: body.percentage,
          taxType: body.tax_type,
          country: body.country ?? null,
          region: body.region ?? null,
          description: body.description ?? null,
        }),
      ),
    logger,
  );
  mountRoute(
    app,
    taxRateApi.listTaxRates,
    async ({ query, ctx }) => {
      const page = await rates.list(ctx, { country: query.country, active: query.active, limit: query.limit, offset: query.offset });
      return { items: page.items.map(toTaxRateView), pagination: { total: page.total, limit: query.limit, offset: query.offset } };
    },
    logger,
  );
  mountRoute(app, taxRateApi.getTaxRate, async ({ params, ctx }) => toTaxRateView(await rates.get(ctx, params.id)), logger);
  mountRoute(app, taxRateApi.updateTaxRate, async ({ params, body, ctx }) => toTaxRateView(await rates.update(ctx, params.id, { name: body.name, description: body.description })), logger);
  mountRoute(app, taxRateApi.archiveTaxRate, async ({ params, ctx }) => toTaxRateView(await rates.archive(ctx, params.id)), logger);
}
