import type { BillingPeriod } from '../periods';
import type { TaxBehavior } from '../invoice-arithmetic';
import type { BillingModel, PackageSpec, PriceType, Tier, TierMode } from '@billstream/pricing';

export type InvoiceCadence = 'ADVANCE' | 'ARREAR';
export type PriceStatus = 'active' | 'archived';

/** A price of a plan: immutable once created but for its status. */
export interface Price {
  id: string;
  tenantId: string;
  environmentId: string;
  planId: string;
  type: PriceType;
  currency: string;
  amount: string | null;
  billingModel: BillingModel;
  billingPeriod: BillingPeriod;
  billingPeriodCount: number;
  invoiceCadence: InvoiceCadence;
  meterId: string | null;
  filterValues: Record<string, string[]> | null;
  package: PackageSpec | null;
  tierMode: TierMode | null;
  tiers: Tier[] | null;
  displayName: string | null;
  /** The rates its lines bear (docs/api/taxes.md#which-rates-a-line-bears); empty: the plan's, the customer's or the address's. */
  taxRateIds: string[];
  /** Null: the settings' `tax.default_behavior`. */
  taxBehavior: TaxBehavior | null;
  /** A subscription's price override (docs/api/billing.md#price-overrides): the plan's price it replaces; null on a plan's own price. */
  parentPriceId: string | null;
  /** The subscription an override belongs to; null on a plan's own price. */
  subscriptionId: string | null;
  status: PriceStatus;
  createdAt: Date;
  updatedAt: Date;
}

export type NewPrice = Omit<Price, 'id' | 'tenantId' | 'environmentId' | 'planId' | 'parentPriceId' | 'subscriptionId' | 'status' | 'createdAt' | 'updatedAt'>;
