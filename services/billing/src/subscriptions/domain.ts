import type { SubscriptionStatus } from '@billstream/contracts';
import type { BillingCycle, BillingPeriod } from '../periods';

export interface Subscription {
  id: string;
  tenantId: string;
  environmentId: string;
  customerId: string;
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
} as const;
export type SubscriptionEventType = (typeof SUBSCRIPTION_EVENTS)[keyof typeof SUBSCRIPTION_EVENTS];

export interface SubscriptionListQuery {
  customerId?: string;
  planId?: string;
  status?: SubscriptionStatus;
  limit: number;
  offset: number;
}

export type CancelAt = 'immediately' | 'end_of_period';
