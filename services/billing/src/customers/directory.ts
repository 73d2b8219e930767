import type { Scope } from '@billstream/contracts';
import type { Db } from '@billstream/db';
import { NotFoundError } from '@billstream/errors';
import type { CustomerLookup, CustomerRef } from '../clients/customers/domain';
import type { CustomerStore, KnownCustomer } from './store';

function notFound(ref: CustomerRef): NotFoundError {
  return 'id' in ref
    ? new NotFoundError(`Customer ${ref.id} not found`, { field: 'customer_id', customer_id: ref.id })
    : new NotFoundError(`Customer with external id ${ref.externalId} not found`, {
        field: 'external_customer_id',
        external_customer_id: ref.externalId,
      });
}

const live = (c: KnownCustomer | undefined, scope: Scope) =>
  !!c && !c.deleted && c.tenantId === scope.tenantId && c.environmentId === scope.environmentId;

export interface CustomerDirectoryDeps {
  db: Db;
  store: CustomerStore;
  lookup: CustomerLookup;
  clock: () => Date;
}

/**
 * A customer by id or external id: the local projection first, and for one not seen yet
 * (created a moment ago, its event still on the way) the customer service itself.
 */
export class CustomerDirectory {
  constructor(private readonly deps: CustomerDirectoryDeps) {}

  async resolve(scope: Scope, ref: CustomerRef, requestId: string): Promise<KnownCustomer> {
    const known = 'id' in ref ? await this.deps.store.getById(this.deps.db, ref.id) : await this.deps.store.getByExternalId(this.deps.db, scope, ref.externalId);
    if (known) {
      if (!live(known, scope)) throw notFound(ref);
      return known;
    }
    const found = await this.deps.lookup.find(scope, ref, requestId);
    if (!found) throw notFound(ref);
    await this.deps.store.remember(this.deps.db, scope, found.id, found.externalId, this.deps.clock(), found.details, found.parentCustomerId, found.tax);
    const remembered = await this.deps.store.getById(this.deps.db, found.id);
    if (!live(remembered, scope)) throw notFound(ref);
    return remembered!;
  }

  /**
   * Whether `ancestorId` is above `customerId` in the hierarchy, asked of the customer service
   * hop by hop (a parent set a moment ago counts, whether or not its event arrived); each hop
   * is remembered in the projection with its parent. The customer service refuses cycles; the
   * walk stops after 64 hops all the same.
   */
  async isAncestor(scope: Scope, customerId: string, ancestorId: string, requestId: string): Promise<boolean> {
    let at = customerId;
    for (let hop = 0; hop < 64; hop++) {
      const found = await this.deps.lookup.find(scope, { id: at }, requestId);
      if (!found) return false;
      await this.deps.store.remember(this.deps.db, scope, found.id, found.externalId, this.deps.clock(), undefined, found.parentCustomerId);
      if (!found.parentCustomerId) return false;
      if (found.parentCustomerId === ancestorId) return true;
      at = found.parentCustomerId;
    }
    return false;
  }

  /** The projection's record of a customer the service already knows (a subscription's). */
  async known(id: string): Promise<KnownCustomer | undefined> {
    return this.deps.store.getById(this.deps.db, id);
  }
}
