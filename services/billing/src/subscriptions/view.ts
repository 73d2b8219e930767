import type { SubscriptionResponse } from '@billstream/contracts';
import type { Subscription } from './domain';
import { overrideView } from './store';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** The public JSON of a subscription: responses and `payload.subscription` of its events. */
export function toSubscriptionView(s: Subscription): SubscriptionResponse {
  return {
    id: s.id,
    customer_id: s.customerId,
    invoicing_customer_id: s.invoicingCustomerId,
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
    usage_thresholds: s.usageThresholds.map((amount) => ({ amount })),
    pending_change: s.pendingChange && {
      change_id: s.pendingChange.changeId,
      plan_id: s.pendingChange.planId,
      billing_period: s.pendingChange.billingPeriod,
      proration_behavior: s.pendingChange.request.prorationBehavior,
      effective: s.pendingChange.request.effective,
      commitment_amount: s.pendingChange.commitmentAmount,
      price_overrides: s.pendingChange.priceOverrides.map((o) => ({ price_id: o.priceId, override_price_id: o.overridePriceId })),
      // Absent on a change stored before thresholds existed, or that left them as they are: null.
      usage_thresholds: s.pendingChange.usageThresholds ? s.pendingChange.usageThresholds.map((amount) => ({ amount })) : null,
      effective_at: s.pendingChange.effectiveAt.toISOString(),
    },
    metadata: s.metadata,
    created_at: s.createdAt.toISOString(),
    updated_at: s.updatedAt.toISOString(),
    tenant_id: s.tenantId,
    environment_id: s.environmentId,
  };
}
