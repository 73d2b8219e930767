import type { Scope } from '@billstream/contracts';
import type { Conn } from '@billstream/db';
import type { CustomerStore } from './store';

/**
 * The customers a list filter by `customer_id` names (docs/api/hierarchy-billing.md): the customer, and
 * with `include_children` its descendants as billing's projection knows them, each once.
 */
export async function customerScope(conn: Conn, store: CustomerStore, scope: Scope, customerId: string | undefined, includeChildren: boolean | undefined): Promise<string[] | undefined> {
  if (customerId === undefined) return undefined;
  if (!includeChildren) return [customerId];
  return [customerId, ...(await store.descendants(conn, scope, customerId))];
}
