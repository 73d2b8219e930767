import type { SubscriptionStatus, WebhookEventName } from '@billstream/contracts';
import type { BillingCycle, BillingPeriod } from '../periods';
import type { PriceOverride } from './price-overrides';

/** What a plan change asked (docs/api/plan-changes.md), as the subscription shows it in `pending_change`. */
export interface ChangeRequest {
  planId: string;
  billingPeriod?: BillingPeriod;
  prorationBehavior: ProrationBehavior;
  effective: ChangeEffective;
  priceOverrides?: Array<{ priceId: string; amount?: string; tiers?: Array<{ upTo: string | null; unitAmount: string; flatAmount: string | null }> }>;
  commitmentAmount?: number;
  usageThresholds?: number[];
}

export type ProrationBehavior = 'create_prorations' | 'none';
export type ChangeEffective = 'immediately' | 'period_end';

/**
 * A change at the end of the current period, resolved when it was asked: the plan's prices it
 * will bill (the subscription's own override prices made then), its billing period, and when.
 */
export interface PendingChange {
  changeId: string;
  request: ChangeRequest;
  planId: string;
  billingPeriod: BillingPeriod;
  billingPeriodCount: number;
  priceIds: string[];
  priceOverrides: PriceOverride[];
  commitmentAmount: number | null;
  /** Absent on changes stored before thresholds existed: the subscription's stay. */
  usageThresholds?: number[];
  effectiveAt: Date;
}

export interface Subscription {
  id: string;
  tenantId: string;
  environmentId: string;
  customerId: string;
  /** The ancestor that pays it (docs/api/hierarchy-billing.md, ADR 0047): its invoices, wallets, grants and real-time balance; null: the customer pays. */
  invoicingCustomerId: string | null;
  planId: string;
  currency: string;
  billingPeriod: BillingPeriod;
  billingPeriodCount: number;
  billingCycle: BillingCycle;
  timezone: string;
  status: SubscriptionStatus;
  /** When billing starts; null on a draft created without one (it starts at activation). */
  startDate: Date | null;
  /** Where the current run of periods is anchored: the start, the trial end, or the last resume. */
  billingAnchor: Date | null;
  currentPeriodStart: Date | null;
  currentPeriodEnd: Date | null;
  trialPeriodDays: number | null;
  trialEnd: Date | null;
  paymentTermsDays: number;
  cancelAtPeriodEnd: boolean;
  cancelledAt: Date | null;
  pausedAt: Date | null;
  /** The minimum a period bills, in minor units (docs/api/billing.md#minimum-commitments); null without one. */
  commitmentAmount: number | null;
  /** The prices it bills at its own amount or tiers (docs/api/billing.md#price-overrides), fixed at its creation. */
  priceOverrides: PriceOverride[];
  /** Progressive billing thresholds in minor units, ascending (docs/api/thresholds.md); [] without. */
  usageThresholds: number[];
  /** The last immediate plan change inside the current period (docs/api/plan-changes.md); null once a new period starts. Its ARREAR charges and usage count from here. */
  lastChangeAt: Date | null;
  /** A change waiting for the end of the current period; null without one. */
  pendingChange: PendingChange | null;
  metadata: Record<string, string>;
  version: number;
  createdAt: Date;
  updatedAt: Date;
}


export const SUBSCRIPTION_EVENTS = {
  created: 'subscription.created',
  draftCreated: 'subscription.draft.created',
  activated: 'subscription.activated',
  updated: 'subscription.updated',
  paused: 'subscription.paused',
  resumed: 'subscription.resumed',
  cancelled: 'subscription.cancelled',
  renewalDue: 'subscription.renewal.due',
} as const satisfies Record<string, WebhookEventName>;
export type SubscriptionEventType = (typeof SUBSCRIPTION_EVENTS)[keyof typeof SUBSCRIPTION_EVENTS];

export interface SubscriptionListQuery {
  customerId?: string;
  planId?: string;
  status?: SubscriptionStatus;
  limit: number;
  offset: number;
}

export type CancelAt = 'immediately' | 'end_of_period';

/** Where the current plan's usage of the current period counts from: the last immediate change inside it, else the period start. */
export function currentPlanSince(s: Pick<Subscription, 'currentPeriodStart' | 'currentPeriodEnd' | 'lastChangeAt'>): Date | null {
  const at = s.lastChangeAt?.getTime();
  if (at === undefined || !s.currentPeriodStart || !s.currentPeriodEnd) return s.currentPeriodStart;
  return at > s.currentPeriodStart.getTime() && at < s.currentPeriodEnd.getTime() ? s.lastChangeAt : s.currentPeriodStart;
}

/** Who pays a subscription's invoices: its invoicing customer, else its customer (ADR 0047). */
export const payerOf = (s: Pick<Subscription, 'customerId' | 'invoicingCustomerId'>): string => s.invoicingCustomerId ?? s.customerId;
