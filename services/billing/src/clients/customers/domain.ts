import type { Scope } from '@billstream/contracts';

/** A customer as a request names it: billing's id, or the client's external id. */
export type CustomerRef = { id: string } | { externalId: string };

/** A customer as the customer service answers it. */
export interface FoundCustomer {
  id: string;
  externalId: string;
  parentCustomerId: string | null;
}

/** Asks the customer service for a customer of a tenant and environment (undefined: none). */
export interface CustomerLookup {
  find(scope: Scope, ref: CustomerRef, requestId: string): Promise<FoundCustomer | undefined>;
}
