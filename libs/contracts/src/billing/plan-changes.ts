import { z } from 'zod';
import { defineRoute, type RouteDef } from '../routes';
import { invoiceSchema, upcomingInvoiceSchema } from './invoices';
import { BILLING_PERIODS } from './prices';
import { checkOneOverridePerPrice, commitmentAmountField, priceOverrideBody, subscriptionSchema, usageThresholdsField } from './subscriptions';

/** Plan changes (docs/api/plan-changes.md, ADR 0043): request and response schemas, routes. */
export const PRORATION_BEHAVIORS = ['create_prorations', 'none'] as const;
export const CHANGE_EFFECTIVE = ['immediately', 'period_end'] as const;

const id = z.string().min(1, 'must not be empty').max(255, 'must be at most 255 characters');
const idParams = z.strictObject({ id });

export const changeSubscriptionBody = z
  .strictObject({
    plan_id: id,
    /** Default: the subscription's, else the plan's only one. */
    billing_period: z.enum(BILLING_PERIODS).optional(),
    proration_behavior: z.enum(PRORATION_BEHAVIORS, { error: 'must be create_prorations or none' }).default('create_prorations'),
    effective: z.enum(CHANGE_EFFECTIVE, { error: 'must be immediately or period_end' }).default('immediately'),
    /** Prices of the new plan billed at the subscription's own amount or tiers (docs/api/billing.md#price-overrides). */
    price_overrides: z.array(priceOverrideBody).min(1, 'needs at least one override').max(100, 'at most 100 overrides').optional(),
    /** The new minimum per billed period, in minor units; absent: the subscription's stays. */
    commitment_amount: commitmentAmountField.optional(),
    /** The new progressive billing thresholds (section 9); absent: the subscription's stay. */
    usage_thresholds: usageThresholdsField.optional(),
    idempotency_key: z.string().min(1, 'must not be empty').max(255, 'must be at most 255 characters').optional(),
  })
  .superRefine((body, ctx) => checkOneOverridePerPrice(body.price_overrides, ctx))
  .meta({
    examples: [
      {
        plan_id: 'plan_01JDQ8Z6Y4K2M9N3P5R7T9V1X5',
        proration_behavior: 'create_prorations',
        effective: 'immediately',
        idempotency_key: 'upgrade-acme-42-pro',
      },
    ],
  });
export type ChangeSubscriptionBody = z.output<typeof changeSubscriptionBody>;

/** A change waiting for the period end, as the subscription shows it. */
export const pendingChangeSchema = z
  .object({
    change_id: z.string(),
    plan_id: z.string(),
    billing_period: z.enum(BILLING_PERIODS),
    proration_behavior: z.enum(PRORATION_BEHAVIORS),
    effective: z.enum(CHANGE_EFFECTIVE),
    commitment_amount: z.number().int().nullable(),
    price_overrides: z.array(z.object({ price_id: z.string(), override_price_id: z.string() })),
    effective_at: z.string(),
  })
  .meta({ id: 'PendingChange' });

export const changeSubscriptionResponse = z
  .object({
    subscription: subscriptionSchema,
    /** The SUBSCRIPTION_UPDATE invoice the change made; null when it bills no line (a period-end change, a trial, nothing to prorate). */
    invoice: invoiceSchema.nullable(),
  })
  .meta({ id: 'SubscriptionChange' });

export const previewSubscriptionChangeResponse = z
  .object({
    /** The subscription as the change would leave it, `effective_at` the instant of the preview. */
    subscription: subscriptionSchema.extend({ effective_at: z.string() }),
    invoice: upcomingInvoiceSchema.nullable(),
  })
  .meta({ id: 'SubscriptionChangePreview' });

export const planChangeApi = {
  changeSubscription: defineRoute({
    operationId: 'changeSubscription',
    method: 'post',
    path: '/v1/subscriptions/:id/change',
    service: 'billing',
    permission: 'subscriptions:write',
    summary: 'Change the plan now (one SUBSCRIPTION_UPDATE invoice: the old plan up to now, prorations) or at the period end',
    tag: 'Subscriptions',
    params: idParams,
    body: changeSubscriptionBody,
    response: changeSubscriptionResponse,
    status: 200,
    errors: [404, 409],
  }),
  previewSubscriptionChange: defineRoute({
    operationId: 'previewSubscriptionChange',
    method: 'post',
    path: '/v1/subscriptions/:id/change/preview',
    service: 'billing',
    permission: 'subscriptions:read',
    summary: 'The answer the same change would give now; nothing is stored, debited or published',
    tag: 'Subscriptions',
    params: idParams,
    body: changeSubscriptionBody,
    response: previewSubscriptionChangeResponse,
    status: 200,
    errors: [404],
  }),
  cancelPendingChange: defineRoute({
    operationId: 'cancelPendingChange',
    method: 'delete',
    path: '/v1/subscriptions/:id/pending_change',
    service: 'billing',
    permission: 'subscriptions:write',
    summary: 'Drop the change waiting for the period end',
    tag: 'Subscriptions',
    params: idParams,
    response: subscriptionSchema,
    status: 200,
    errors: [404],
  }),
};

export const planChangeRoutes: RouteDef[] = Object.values(planChangeApi) as RouteDef[];
