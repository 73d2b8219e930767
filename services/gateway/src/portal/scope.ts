import type { RequestContext } from '@billstream/http';
import { seg, type Owners } from './owners';
import type { PortalSessionRecord } from './store';

/** What a portal page shows of a customer. */
export interface PortalCustomer {
  id: string;
  external_id: string;
  name: string | null;
  email: string | null;
  parent_customer_id: string | null;
}

/** A session's reach: its customer and every descendant, read from the customer service (which owns the tree). */
export interface PortalScope {
  session: PortalSessionRecord;
  ctx: RequestContext;
  root: PortalCustomer;
  customers: PortalCustomer[];
  ids: Set<string>;
}

/** Depth and size bounds of the walk: a tree deeper or larger than these shows its first levels. */
export const MAX_DEPTH = 64;
export const MAX_CUSTOMERS = 1000;
const PAGE = 1000;

const view = (c: PortalCustomer): PortalCustomer => ({ id: c.id, external_id: c.external_id, name: c.name, email: c.email, parent_customer_id: c.parent_customer_id });

/**
 * The customers a session reaches, level by level (`GET /v1/customers?parent_customer_ids=`),
 * each once (a cycle a moment long cannot loop). Undefined when the session's customer is gone.
 */
export async function scopeOf(owners: Owners, session: PortalSessionRecord, requestId: string): Promise<PortalScope | undefined> {
  const ctx: RequestContext = { tenantId: session.tenantId, environmentId: session.environmentId, actor: session.id, requestId };
  const root = await owners.get<PortalCustomer>('customer', ctx, `/v1/customers/${seg(session.customerId)}`);
  if (!root) return undefined;
  const customers = [view(root)];
  const ids = new Set([root.id]);
  let level = [root.id];
  for (let depth = 0; depth < MAX_DEPTH && level.length > 0 && customers.length < MAX_CUSTOMERS; depth += 1) {
    const next: string[] = [];
    // Parents in batches of 100 ids: a query string stays short.
    for (let i = 0; i < level.length; i += 100) {
      const parents = level.slice(i, i + 100).map(seg).join(',');
      const page = await owners.get<{ items: PortalCustomer[] }>('customer', ctx, `/v1/customers?parent_customer_ids=${parents}&limit=${PAGE}`);
      for (const child of page?.items ?? []) {
        if (ids.has(child.id) || customers.length >= MAX_CUSTOMERS) continue;
        ids.add(child.id);
        customers.push(view(child));
        next.push(child.id);
      }
    }
    level = next;
  }
    // The root's parent is outside the session's reach: not shown.
  customers[0] = { ...customers[0], parent_customer_id: null };
  return { session, ctx, root: customers[0], customers, ids };
}
