import type { PlanPriceBody, PriceResponse } from '@billstream/contracts';
import type { NewPrice, Price } from './domain';

/** The public JSON of a price. */
export function toPriceView(p: Price): PriceResponse {
  return {
    id: p.id,
    plan_id: p.planId,
    type: p.type,
    currency: p.currency,
    amount: p.amount,
    billing_model: p.billingModel,
    billing_period: p.billingPeriod,
    billing_period_count: p.billingPeriodCount,
    invoice_cadence: p.invoiceCadence,
    meter_id: p.meterId,
    filter_values: p.filterValues,
    package: p.package,
    tier_mode: p.tierMode,
    tiers: p.tiers && p.tiers.map((t) => ({ up_to: t.upTo, unit_amount: t.unitAmount, flat_amount: t.flatAmount })),
    display_name: p.displayName,
    tax_rate_ids: [...p.taxRateIds],
    tax_behavior: p.taxBehavior,
    parent_price_id: p.parentPriceId,
    subscription_id: p.subscriptionId,
    status: p.status,
    created_at: p.createdAt.toISOString(),
    updated_at: p.updatedAt.toISOString(),
    tenant_id: p.tenantId,
    environment_id: p.environmentId,
  };
}

/** A validated price body as the domain's new price. */
export function newPriceOf(b: PlanPriceBody): NewPrice {
  return {
    type: b.type,
    currency: b.currency,
    amount: b.amount ?? null,
    billingModel: b.billing_model,
    billingPeriod: b.billing_period,
    billingPeriodCount: b.billing_period_count,
    invoiceCadence: b.invoice_cadence,
    meterId: b.meter_id ?? null,
    filterValues: b.filter_values ?? null,
    package: b.package ?? null,
    tierMode: b.tier_mode ?? null,
    tiers: b.tiers ? b.tiers.map((t) => ({ upTo: t.up_to, unitAmount: t.unit_amount, flatAmount: t.flat_amount ?? null })) : null,
    displayName: b.display_name ?? null,
    taxRateIds: b.tax_rate_ids ?? [],
    taxBehavior: b.tax_behavior ?? null,
  };
}
