import type { Db, Trx } from '@billstream/db';
import { NotFoundError } from '@billstream/errors';
import type { Clock } from '../ledger/ledger';
import type { Scope } from '@billstream/contracts';
import type { CustomerStore, KnownCustomer } from './store';

/** Asks the customer service whether a customer exists in a tenant and environment. */
export interface CustomerLookup {
  exists(scope: Scope, id: string, requestId: string): Promise<boolean>;
  /** The id of the customer with this external id, undefined when there is none. */
  idOfExternal(scope: Scope, externalId: string, requestId: string): Promise<string | undefined>;
}

function notFound(id: string): NotFoundError {
  return new NotFoundError(`Customer ${id} not found`, { field: 'customer_id', customer_id: id });
}

function live(c: KnownCustomer | undefined, scope: Scope): boolean {
  return !!c && !c.deleted && c.tenantId === scope.tenantId && c.environmentId === scope.environmentId;
}

/**
 * Whether a customer exists: the local projection first, and for a customer not seen yet
 * (created a moment ago, its event still on the way) the customer service itself.
 */
export class CustomerDirectory {
  constructor(
    private readonly db: Db,
    private readonly store: CustomerStore,
    private readonly lookup: CustomerLookup,
    private readonly clock: Clock,
  ) {}

  async ensureExists(scope: Scope, id: string, requestId: string): Promise<void> {
    const known = await this.store.find(this.db, id);
    if (known) {
      if (!live(known, scope)) throw notFound(id);
      return;
    }
    if (!(await this.lookup.exists(scope, id, requestId))) throw notFound(id);
    await this.store.remember(this.db, scope, id, this.clock());
  }

  /** The customer named by its external id (the customer service knows it): 404 naming `external_customer_id` when none. */
  async resolveExternal(scope: Scope, externalId: string, requestId: string): Promise<string> {
    const id = await this.lookup.idOfExternal(scope, externalId, requestId);
    if (!id) throw new NotFoundError(`Customer with external id ${externalId} not found`, { field: 'external_customer_id', external_customer_id: externalId });
    await this.ensureExists(scope, id, requestId);
    return id;
  }

  /**
   * `ensureExists` for several customers without failing: the projection is read once and the
   * customers it does not know yet are asked of the customer service (at once); those that
   * exist are remembered. Answers the ids of the customers that exist.
   */
  async learnMany(scope: Scope, ids: string[], requestId: string): Promise<Set<string>> {
    const unique = [...new Set(ids)];
    const known = new Map((await this.store.findMany(this.db, unique)).map((c) => [c.id, c]));
    const found = new Set(unique.filter((id) => live(known.get(id), scope)));
    const unknown = unique.filter((id) => !known.has(id));
    const exists = await Promise.all(unknown.map((id) => this.lookup.exists(scope, id, requestId)));
    for (const [i, id] of unknown.entries()) {
      if (!exists[i]) continue;
      await this.store.remember(this.db, scope, id, this.clock());
      found.add(id);
    }
    return found;
  }

  /** `lockExisting` for several customers in one statement: answers those that still exist (share-locked until the commit). */
  async lockExistingMany(trx: Trx, scope: Scope, ids: string[]): Promise<Set<string>> {
    const rows = await this.store.findManyForShare(trx, [...new Set(ids)]);
    return new Set(rows.filter((c) => live(c, scope)).map((c) => c.id));
  }

  /** Inside a transaction: the customer still exists, and stays so until it commits. */
  async lockExisting(trx: Trx, scope: Scope, id: string): Promise<void> {
    if (!live(await this.store.findForShare(trx, id), scope)) throw notFound(id);
  }
}
