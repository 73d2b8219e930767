import { z } from 'zod';
import { BILLING_MODELS, BILLING_PERIODS, INVOICE_CADENCES, PACKAGE_ROUNDS, BILLING_PRICE_TYPES, TIER_MODES } from './prices';

/** Response bodies of the billing routes (the field lists of docs/api/billing.md). */
export const PLAN_STATUSES = ['active', 'archived'] as const;
export const PRICE_STATUSES = ['active', 'archived'] as const;

export const priceSchema = z.object({
  id: z.string(),
  plan_id: z.string(),
  type: z.enum(BILLING_PRICE_TYPES),
  currency: z.string(),
  amount: z.string().nullable(),
  billing_model: z.enum(BILLING_MODELS),
  billing_period: z.enum(BILLING_PERIODS),
  billing_period_count: z.number().int(),
  invoice_cadence: z.enum(INVOICE_CADENCES),
  meter_id: z.string().nullable(),
  filter_values: z.record(z.string(), z.array(z.string())).nullable(),
  package: z.object({ size: z.string(), round: z.enum(PACKAGE_ROUNDS) }).nullable(),
  tier_mode: z.enum(TIER_MODES).nullable(),
  tiers: z.array(z.object({ up_to: z.string().nullable(), unit_amount: z.string(), flat_amount: z.string().nullable() })).nullable(),
  display_name: z.string().nullable(),
  tax_rate_ids: z.array(z.string()),
  tax_behavior: z.enum(['exclusive', 'inclusive']).nullable(),
  /** On a subscription's price override (docs/api/billing.md#price-overrides): the plan's price it replaces, and the subscription. */
  parent_price_id: z.string().nullable(),
  subscription_id: z.string().nullable(),
  status: z.enum(PRICE_STATUSES),
  created_at: z.string(),
  updated_at: z.string(),
  tenant_id: z.string(),
  environment_id: z.string(),
}).meta({ id: 'Price' });
export type PriceResponse = z.infer<typeof priceSchema>;

export const planSchema = z.object({
  id: z.string(),
  name: z.string(),
  lookup_key: z.string().nullable(),
  description: z.string().nullable(),
  metadata: z.record(z.string(), z.string()),
  status: z.enum(PLAN_STATUSES),
  prices: z.array(priceSchema),
  tax_rate_ids: z.array(z.string()),
  created_at: z.string(),
  updated_at: z.string(),
  tenant_id: z.string(),
  environment_id: z.string(),
}).meta({ id: 'Plan' });
export type PlanResponse = z.infer<typeof planSchema>;
