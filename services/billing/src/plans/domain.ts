import type { Price } from '../prices/domain';

export type PlanStatus = 'active' | 'archived';

export interface Plan {
  id: string;
  tenantId: string;
  environmentId: string;
  name: string;
  lookupKey: string | null;
  description: string | null;
  metadata: Record<string, string>;
  status: PlanStatus;
  /** The rates its lines bear when their price names none (docs/api/taxes.md#which-rates-a-line-bears). */
  taxRateIds: string[];
  /** 1 at creation, +1 on every update or archive; the ETag is `"<version>"`. */
  version: number;
  createdAt: Date;
  updatedAt: Date;
}

export interface PlanWithPrices extends Plan {
  prices: Price[];
}

export interface PlanChanges {
  name?: string;
  description?: string | null;
  metadata?: Record<string, string>;
  taxRateIds?: string[];
}

export interface PlanListQuery {
  status?: PlanStatus;
  lookupKey?: string;
  limit: number;
  offset: number;
}
