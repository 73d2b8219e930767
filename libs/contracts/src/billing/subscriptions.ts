import { z } from 'zod';
import { isoTimestamp, metadataSchema, paginationQuery, queryBoolean } from '../common';
import { subscriptionDiscountsField } from './coupons';
import { amountString, BILLING_PERIODS, checkTiers, currencyCode, tierBody } from './prices';

/** Subscriptions (docs/api/billing.md#subscriptions): request and response schemas. */
export const SUBSCRIPTION_STATUSES = ['draft', 'trialing', 'active', 'paused', 'cancelled'] as const;
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number];
export const BILLING_CYCLES = ['anniversary', 'calendar'] as const;
export const CANCEL_AT = ['immediately', 'end_of_period'] as const;

const id = z.string().min(1, 'must not be empty').max(255, 'must be at most 255 characters');

/**
 * One price override (docs/api/billing.md#price-overrides): a price the subscription bills and its new
 * `amount` (FLAT_FEE, PACKAGE and FIXED prices) or `tiers` (TIERED ones), exactly one of them;
 * which one the price takes is checked against the price.
 */
export const priceOverrideBody = z
  .strictObject({
    price_id: id,
    amount: amountString.optional(),
    tiers: z.array(tierBody).min(1, 'needs at least one tier').max(100, 'at most 100 tiers').optional(),
  })
  .superRefine((o, ctx) => {
    if ((o.amount === undefined) === (o.tiers === undefined)) ctx.addIssue({ code: 'custom', path: ['amount'], message: 'exactly one of amount and tiers is required' });
    if (o.tiers) checkTiers(o.tiers, (path, message) => ctx.addIssue({ code: 'custom', path, message }));
  })
  .meta({ examples: [{ price_id: 'price_01JDQ8Z6Y4K2M9N3P5R7T9V1X4', amount: '39' }] });
export type PriceOverrideBody = z.output<typeof priceOverrideBody>;

/** One override per price (a body's `price_overrides`, on creation and on a plan change): a second one is an issue at its `price_id`. */
export function checkOneOverridePerPrice(overrides: ReadonlyArray<{ price_id: string }> | undefined, ctx: z.RefinementCtx): void {
  const seen = new Set<string>();
  overrides?.forEach((o, i) => {
    if (seen.has(o.price_id)) ctx.addIssue({ code: 'custom', path: ['price_overrides', i, 'price_id'], message: `overrides price ${o.price_id} a second time: one override per price` });
    seen.add(o.price_id);
  });
}

/** A minimum commitment per billed period, in minor units (docs/api/billing.md#minimum-commitments): on creation and on a plan change. */
export const commitmentAmountField = z
  .number()
  .int('must be a whole number of minor units')
  .min(0, 'must be between 0 and 10^15')
  .max(1e15, 'must be between 0 and 10^15');

/**
 * Progressive billing thresholds (docs/api/thresholds.md): amounts of period-to-date usage in
 * minor units, strictly ascending, at most 20; crossing one issues a SUBSCRIPTION_THRESHOLD invoice.
 */
export const usageThresholdsField = z
  .array(z.strictObject({ amount: z.number().int('must be a whole number of minor units').min(1, 'must be at least 1').max(1e15, 'must be at most 10^15') }))
  .max(20, 'at most 20 thresholds')
  .superRefine((t, ctx) => {
    t.forEach((x, i) => {
      if (i > 0 && x.amount <= t[i - 1]!.amount) ctx.addIssue({ code: 'custom', path: [i, 'amount'], message: 'must be greater than the threshold before it (strictly ascending)' });
    });
  });

export const createSubscriptionBody = z
  .strictObject({
    customer_id: id.optional(),
    external_customer_id: id.optional(),
    plan_id: id,
    currency: currencyCode.optional(),
    billing_period: z.enum(BILLING_PERIODS).optional(),
    start_date: isoTimestamp.optional(),
    billing_cycle: z.enum(BILLING_CYCLES).default('anniversary'),
    timezone: z.string().min(1, 'must not be empty').max(64, 'must be at most 64 characters').default('UTC'),
    trial_period_days: z.number().int('must be a whole number').min(0, 'must be between 0 and 730').max(730, 'must be between 0 and 730').optional(),
    payment_terms_days: z.number().int('must be a whole number').min(0, 'must be between 0 and 365').max(365, 'must be between 0 and 365').default(0),
    draft: z.boolean().default(false),
    metadata: metadataSchema.optional(),
    /** Coupons to attach, in this order (docs/api/coupons.md): they cover the first period, backdated or not. */
    discounts: subscriptionDiscountsField.optional(),
    /** The minimum each billed period bills, in minor units (docs/api/billing.md#minimum-commitments): a COMMITMENT_TRUE_UP line makes up the difference. */
    commitment_amount: commitmentAmountField.optional(),
    /** Prices the subscription bills at its own amount or tiers (docs/api/billing.md#price-overrides), one each. */
    price_overrides: z.array(priceOverrideBody).min(1, 'needs at least one override').max(100, 'at most 100 overrides').optional(),
    /** Progressive billing (docs/api/thresholds.md): an invoice each time period-to-date usage crosses one. */
    usage_thresholds: usageThresholdsField.optional(),
    /** An ancestor of the customer that pays the subscription (docs/api/hierarchy-billing.md): its invoices, wallets and grants are the payer's; usage and entitlements stay the customer's. */
    invoicing_customer_id: id.optional(),
  })
  .superRefine((body, ctx) => {
    if ((body.customer_id === undefined) === (body.external_customer_id === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['customer_id'], message: 'exactly one of customer_id and external_customer_id is required' });
    }
    checkOneOverridePerPrice(body.price_overrides, ctx);
  })
  .meta({
    examples: [
      {
        external_customer_id: 'acme-42',
        plan_id: 'plan_01JDQ8Z6Y4K2M9N3P5R7T9V1X3',
        currency: 'usd',
        billing_period: 'MONTHLY',
        start_date: '2026-01-15T10:30:00Z',
        billing_cycle: 'anniversary',
        timezone: 'Europe/Berlin',
        trial_period_days: 14,
        metadata: { po_number: 'PO-1001' },
        commitment_amount: 50000,
        price_overrides: [{ price_id: 'price_01JDQ8Z6Y4K2M9N3P5R7T9V1X4', amount: '39' }],
      },
    ],
  });
export type CreateSubscriptionBody = z.output<typeof createSubscriptionBody>;

export const cancelSubscriptionBody = z.strictObject({
  cancel_at: z.enum(CANCEL_AT, { error: 'must be immediately or end_of_period' }).default('immediately'),
});

/** activate, pause and resume take no fields; an absent body is an empty one. */
export const emptyBody = z.strictObject({});

export const listSubscriptionsQuery = z.strictObject({
  ...paginationQuery,
  customer_id: id.optional(),
  plan_id: id.optional(),
  status: z.enum(SUBSCRIPTION_STATUSES).optional(),
});
export type ListSubscriptionsQuery = z.output<typeof listSubscriptionsQuery>;

export const subscriptionSchema = z.object({
  id: z.string(),
  customer_id: z.string(),
  /** The ancestor that pays it (docs/api/hierarchy-billing.md); null: the customer pays. */
  invoicing_customer_id: z.string().nullable(),
  plan_id: z.string(),
  currency: z.string(),
  billing_period: z.enum(BILLING_PERIODS),
  billing_period_count: z.number().int(),
  billing_cycle: z.enum(BILLING_CYCLES),
  timezone: z.string(),
  status: z.enum(SUBSCRIPTION_STATUSES),
  start_date: z.string().nullable(),
  current_period_start: z.string().nullable(),
  current_period_end: z.string().nullable(),
  trial_period_days: z.number().int().nullable(),
  trial_end: z.string().nullable(),
  payment_terms_days: z.number().int(),
  cancel_at_period_end: z.boolean(),
  cancelled_at: z.string().nullable(),
  paused_at: z.string().nullable(),
  commitment_amount: z.number().int().nullable(),
  /** What each override asked (docs/api/billing.md#price-overrides): the plan's price, the subscription's own price billed instead, its amount or tiers. */
  price_overrides: z.array(
    z.object({
      price_id: z.string(),
      override_price_id: z.string(),
      amount: z.string().nullable(),
      tiers: z.array(z.object({ up_to: z.string().nullable(), unit_amount: z.string(), flat_amount: z.string().nullable() })).nullable(),
    }),
  ),
  /** Progressive billing thresholds (docs/api/thresholds.md), ascending; [] without. */
  usage_thresholds: z.array(z.object({ amount: z.number().int() })),
  /** A change waiting for the end of the current period (docs/api/plan-changes.md); null without one. */
  pending_change: z
    .object({
      change_id: z.string(),
      plan_id: z.string(),
      billing_period: z.enum(BILLING_PERIODS),
      proration_behavior: z.enum(['create_prorations', 'none']),
      effective: z.enum(['immediately', 'period_end']),
      commitment_amount: z.number().int().nullable(),
      price_overrides: z.array(z.object({ price_id: z.string(), override_price_id: z.string() })),
      /** The thresholds the change sets at the period end; null: the subscription's stay. */
      usage_thresholds: z.array(z.object({ amount: z.number().int() })).nullable(),
      effective_at: z.string(),
    })
    .nullable(),
  metadata: z.record(z.string(), z.string()),
  created_at: z.string(),
  updated_at: z.string(),
  tenant_id: z.string(),
  environment_id: z.string(),
}).meta({ id: 'Subscription' });
export type SubscriptionResponse = z.infer<typeof subscriptionSchema>;

const usageLineSchema = z.object({
  description: z.string(),
  quantity: z.string(),
  unit_amount: z.string(),
  amount: z.number().int(),
});

export const subscriptionUsageSchema = z.object({
  subscription_id: z.string(),
  customer_id: z.string(),
  currency: z.string(),
  period_start: z.string(),
  period_end: z.string(),
  as_of: z.string(),
  amount: z.number().int(),
  items: z.array(
    z.object({
      price_id: z.string(),
      meter_id: z.string(),
      display_name: z.string().nullable(),
      quantity: z.string(),
      amount: z.number().int(),
      lines: z.array(usageLineSchema),
    }),
  ),
});
export type SubscriptionUsageResponse = z.infer<typeof subscriptionUsageSchema>;

/** `GET /v1/customers/{id}/usage` (docs/api/hierarchy-billing.md#lists-with-include_children): with `include_children=true`, its descendants' subscriptions too. */
export const customerUsageQuery = z.strictObject({
  include_children: queryBoolean.optional(),
});

export const customerUsageSchema = z
  .object({
    customer_id: z.string(),
    as_of: z.string(),
    /** The current period of each active or trialing subscription of the customer (and of its descendants), by subscription id. */
    subscriptions: z.array(subscriptionUsageSchema.pick({ subscription_id: true, customer_id: true, currency: true, amount: true, items: true, period_start: true, period_end: true })),
    /** The amounts summed per currency (never across currencies), by currency code. */
    totals: z.array(z.object({ currency: z.string(), amount: z.number().int() })),
  })
  .meta({ id: 'CustomerUsage' });
export type CustomerUsageResponse = z.infer<typeof customerUsageSchema>;
