import { ValidationError } from '@billstream/errors';
import type { TaxExempt, TaxId } from './tax-ids';

/** The customer as the service and its store know it (no HTTP or API names here). */
export type CustomerStatus = 'published' | 'draft' | 'archived';

export interface CustomerAddress {
  line1: string | null;
  line2: string | null;
  city: string | null;
  state: string | null;
  postalCode: string | null;
  country: string | null;
}

export interface Customer {
  id: string;
  tenantId: string;
  environmentId: string;
  externalId: string;
  name: string | null;
  email: string | null;
  address: CustomerAddress;
  /** Checked by format and checksum (`assertTaxIds`). */
  taxIds: TaxId[];
  taxExempt: TaxExempt;
  /** Tax rates its lines bear when their price and plan name none (docs/api/taxes.md); billing checked they exist and are active. */
  taxRateIds: string[];
  parentCustomerId: string | null;
  metadata: Record<string, string>;
  status: CustomerStatus;
  /** Starts at 1, +1 on every change: the ETag of optimistic locking. */
  version: number;
  createdAt: Date;
  updatedAt: Date;
}

export type CustomerSortField = 'created_at' | 'updated_at' | 'name' | 'email' | 'external_id';

export interface CustomerFilter {
  status?: CustomerStatus;
  ids?: string[];
  externalIds?: string[];
  externalId?: string;
  /** Matched case-insensitively. */
  email?: string;
  parentIds?: string[];
}

export interface CustomerListQuery {
  filter: CustomerFilter;
  sort: CustomerSortField;
  order: 'asc' | 'desc';
  limit: number;
  offset: number;
}

export interface CustomerPage {
  items: Customer[];
  total: number;
}

/** A customer with children cannot be deleted: 400, detach or delete them first. */
export function hasChildrenError(id: string, children?: number): ValidationError {
  return new ValidationError(`Customer ${id} has child customers; detach or delete them first`, {
    field: 'id',
    value: id,
    ...(children !== undefined ? { children } : {}),
  });
}
