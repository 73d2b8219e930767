import { createHash } from 'node:crypto';
import type { ChangeSubscriptionBody } from '@billstream/contracts';
import type { PlanChange } from './domain';

/**
 * The wire body of a change (or its preview) as the service takes it (ADR 0063): the change as
 * asked, in the subscription's terms, its key, and the fingerprint of the body as sent.
 */
export function planChangeOf(subscriptionId: string, body: ChangeSubscriptionBody): PlanChange {
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
    ...(body.idempotency_key !== undefined ? { idempotencyKey: body.idempotency_key } : {}),
    requestHash: requestHash(subscriptionId, body),
  };
}

/**
 * What a retry must repeat to get the first answer: the body but its key, canonical. Taken of the
 * request as sent, so the hashes of changes stored before stay what a retry computes.
 */
export function requestHash(subscriptionId: string, body: ChangeSubscriptionBody): string {
  const { idempotency_key: _key, ...rest } = body;
  return createHash('sha256').update(JSON.stringify({ subscription_id: subscriptionId, ...canonical(rest) })).digest('hex');
}

function canonical(value: unknown): Record<string, unknown> {
  return JSON.parse(JSON.stringify(value, (_k, v: unknown) => (v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b))) : v)));
}
