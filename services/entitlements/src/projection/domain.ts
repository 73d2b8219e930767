import type { FeatureType, UsageResetPeriod } from '@billstream/contracts';

/** A feature as the check needs it (from billing-events and billing's snapshot; ADR 0061). */
export interface Feature {
  id: string;
  tenantId: string;
  environmentId: string;
  lookupKey: string;
  type: FeatureType;
  meterId: string | null;
  status: 'active' | 'archived';
}

/** What a plan's entitlement grants. */
export interface Entitlement {
  id: string;
  planId: string;
  featureId: string;
  isEnabled: boolean;
  /** METERED: a decimal string, or null for unlimited. */
  usageLimit: string | null;
  usageResetPeriod: UsageResetPeriod | null;
  isSoftLimit: boolean;
  staticValue: string | null;
}

/** An active or trialing subscription: which customer and plan, and where its usage windows start and end. */
export interface GrantingSubscription {
  id: string;
  customerId: string;
  planId: string;
  startDate: Date | null;
  currentPeriodStart: Date | null;
  currentPeriodEnd: Date | null;
  createdAt: Date;
}

/** A customer of the projection (customer-events, or the customer service on a miss). */
export interface KnownCustomer {
  id: string;
  tenantId: string;
  environmentId: string;
  externalId: string;
  deleted: boolean;
}

/** A customer as a request names it: its id, or the client's external id. */
export type CustomerRef = { id: string } | { externalId: string };
