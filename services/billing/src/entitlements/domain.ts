import type { FeatureType, UsageResetPeriod } from '@billstream/contracts';

/** What an entitlement grants; which fields a feature type allows is checked in `grant.ts`. */
export interface Grant {
  isEnabled: boolean;
  /** METERED: a decimal string, or null for unlimited; null on other types. */
  usageLimit: string | null;
  /** METERED only. */
  usageResetPeriod: UsageResetPeriod | null;
  isSoftLimit: boolean;
  /** STATIC only. */
  staticValue: string | null;
}

export interface Entitlement extends Grant {
  id: string;
  tenantId: string;
  environmentId: string;
  planId: string;
  featureId: string;
  featureType: FeatureType;
  /** 1 at creation, +1 on every update; the ETag is `"<version>"`. */
  version: number;
  createdAt: Date;
  updatedAt: Date;
}

export interface EntitlementListQuery {
  planId?: string;
  featureId?: string;
  limit: number;
  offset: number;
}

/** The grant fields a request gave (undefined: not given). */
export interface GrantInput {
  isEnabled?: boolean;
  usageLimit?: string | null;
  usageResetPeriod?: UsageResetPeriod;
  isSoftLimit?: boolean;
  staticValue?: string | null;
}
