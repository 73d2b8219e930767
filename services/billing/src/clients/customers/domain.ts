import type { Scope } from '@billstream/contracts';

/** A customer as a request names it: billing's id, or the client's external id. */
export type CustomerRef = { id: string } | { externalId: string };

/** Asks the customer service for a customer of a tenant and environment (undefined: none). */
export interface CustomerLookup {
  find(scope: Scope, ref: CustomerRef, requestId: string): Promise<{ id: string; externalId: string } | undefined>;
}
