import type { Scope } from '@billstream/contracts';

/** A customer as a request names it: billing's id, or the client's external id. */
export type CustomerRef = { id: string } | { externalId: string };

/** A customer as the customer service answers it. */
export interface FoundCustomer {
  id: string;
  externalId: string;
  parentCustomerId: string | null;
  /** Name, email and address as the service answered them (the buyer of documents and of taxes); absent from older answers. */
  details?: { name: string | null; email: string | null; address: Record<string, string | null> | null };
  /** Its tax identity (docs/api/taxes.md#which-rates-a-line-bears); absent from older answers. */
  tax?: { taxExempt: 'none' | 'exempt' | 'reverse'; taxIds: Array<{ type: string; value: string }>; taxRateIds: string[] };
}

/** Asks the customer service for a customer of a tenant and environment (undefined: none). */
export interface CustomerLookup {
  find(scope: Scope, ref: CustomerRef, requestId: string): Promise<FoundCustomer | undefined>;
}
