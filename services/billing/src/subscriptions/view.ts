import type { SubscriptionResponse } from '@billstream/contracts';
import type { Subscription } from './domain';
import { overrideView } from './store';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** The public JSON of a subscription: responses and `payload.subscription` of its events. */
export function toSubscriptionView(s: Subscription): SubscriptionResponse {
  return {
    id: s.id,
    customer_id: s.customerId,
    plan_id: s.planId,
    currency: s.currency,
    billing_period: s.billingPeriod,
    billing_period_count: s.billingPeriodCount,
    billing_cycle: s.billingCycle,
    timezone: s.timezone,
    status: s.status,
    start_date: iso(s.startDate),
    current_period_start: iso(s.currentPeriodStart),
    current_period_end: iso(s.currentPeriodEnd),
    trial_period_days: s.trialPeriodDays,
    trial_end: iso(s.trialEnd),
    payment_terms_days: s.paymentTermsDays,
    cancel_at_period_end: s.cancelAtPeriodEnd,
    cancelled_at: iso(s.cancelledAt),
    paused_at: iso(s.pausedAt),
    commitment_amount: s.commitmentAmount,
    price_overrides: s.priceOverrides.map(overrideView),
    metadata: s.metadata,
    created_at: s.createdAt.toISOString(),
    updated_at: s.updatedAt.toISOString(),
    tenant_id: s.tenantId,
    environment_id: s.environmentId,
  };
}
