import type { CreditGrantApplicationStatus, CreditGrantCadence, CreditGrantStatus } from '@billstream/contracts';
import type { Decimal } from 'decimal.js';
import type { BillingPeriod } from '../periods';

export interface CreditGrant {
  id: string;
  tenantId: string;
  environmentId: string;
  planId: string | null;
  subscriptionId: string | null;
  name: string;
  credits: Decimal;
  cadence: CreditGrantCadence;
  /** Null: the subscription's billing period (and count). */
  period: BillingPeriod | null;
  expireInDays: number | null;
  priority: number | null;
  conversionRate: Decimal | null;
  metadata: Record<string, string>;
  status: CreditGrantStatus;
  archivedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** A grant as the service takes it to make one (the route maps the wire body to it, ADR 0063): on a plan or on a subscription. */
export type NewCreditGrant = Pick<CreditGrant, 'planId' | 'subscriptionId' | 'name' | 'credits' | 'cadence' | 'period' | 'expireInDays' | 'priority' | 'conversionRate' | 'metadata'>;

/** A grant a subscription takes, with the period job's cursor. */
export interface Binding {
  subscriptionId: string;
  grantId: string;
  /** Periods starting before it are not granted (a grant made on a running subscription starts at its current period); null: from the first. */
  startsFrom: Date | null;
  /** The start of the last period recorded; null before the first. */
  appliedThrough: Date | null;
  /** The start of the next period to record; null when none will come (ONETIME done, subscription stopped, grant archived). */
  nextDue: Date | null;
}

export interface Application {
  id: string;
  tenantId: string;
  environmentId: string;
  grantId: string;
  subscriptionId: string;
  customerId: string;
  currency: string;
  periodStart: Date;
  periodEnd: Date;
  credits: Decimal;
  expiryDate: Date | null;
  priority: number | null;
  conversionRate: Decimal;
  description: string;
  idempotencyKey: string;
  status: CreditGrantApplicationStatus;
  skipReason: string | null;
  walletId: string | null;
  walletTransactionId: string | null;
  attempts: number;
  nextAttemptAt: Date | null;
  appliedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface CreditGrantListQuery {
  planId?: string;
  subscriptionId?: string;
  status?: CreditGrantStatus;
  limit: number;
  offset: number;
}

export interface ApplicationListQuery {
  subscriptionId?: string;
  status?: CreditGrantApplicationStatus;
  limit: number;
  offset: number;
}

/** The wallet's idempotency key of one application: one credit per grant, subscription and period start. */
export function applicationKey(grantId: string, subscriptionId: string, periodStart: Date): string {
  return `cgrant:${grantId}:${subscriptionId}:${periodStart.toISOString()}`;
}

/** Why an application credited nothing and never will. */
export const SKIP_REASONS = { expired: 'expired', customerDeleted: 'customer_deleted' } as const;
