import { createHash } from 'node:crypto';
import type { ChangeSubscriptionBody, SubscriptionResponse } from '@billstream/contracts';
import type { ChangeEffective, ChangeRequest } from '../subscriptions/domain';

/** One plan change (`schg_`, docs/api/plan-changes.md): bound to its idempotency key, with the invoice it made. */
export interface ChangeRecord {
  id: string;
  tenantId: string;
  environmentId: string;
  subscriptionId: string;
  idempotencyKey: string | null;
  requestHash: string;
  effective: ChangeEffective;
  effectiveAt: Date;
  fromPlanId: string;
  toPlanId: string;
  invoiceId: string | null;
  /** The subscription as the change answered it (a retry with the key answers it again). */
  subscription: SubscriptionResponse;
  createdAt: Date;
}

/** The change as asked, in the subscription's terms (the pending change keeps it). */
export function changeRequestOf(body: ChangeSubscriptionBody): ChangeRequest {
  return {
    planId: body.plan_id,
    ...(body.billing_period ? { billingPeriod: body.billing_period } : {}),
    prorationBehavior: body.proration_behavior,
    effective: body.effective,
    ...(body.price_overrides
      ? {
          priceOverrides: body.price_overrides.map((o) => ({
            priceId: o.price_id,
            ...(o.amount !== undefined ? { amount: o.amount } : {}),
            ...(o.tiers ? { tiers: o.tiers.map((t) => ({ upTo: t.up_to, unitAmount: t.unit_amount, flatAmount: t.flat_amount ?? null })) } : {}),
          })),
        }
      : {}),
    ...(body.commitment_amount !== undefined ? { commitmentAmount: body.commitment_amount } : {}),
    ...(body.usage_thresholds ? { usageThresholds: body.usage_thresholds.map((t) => t.amount) } : {}),
  };
}

/** What a retry must repeat to get the first answer: the body but its key, canonical. */
export function requestHash(subscriptionId: string, body: ChangeSubscriptionBody): string {
  const { idempotency_key: _key, ...rest } = body;
  return createHash('sha256').update(JSON.stringify({ subscription_id: subscriptionId, ...canonical(rest) })).digest('hex');
}

function canonical(value: unknown): Record<string, unknown> {
  return JSON.parse(JSON.stringify(value, (_k, v: unknown) => (v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b))) : v)));
}
