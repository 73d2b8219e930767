import type { Scope } from '@billstream/contracts';
import type { Db } from '@billstream/db';
import { NotFoundError } from '@billstream/errors';
import { Coalescer } from '../shared/coalescer';
import type { CustomerLookup } from '../upstreams/customers';
import type { CustomerRef, KnownCustomer } from './domain';
import type { ProjectionStore } from './store';

function notFound(ref: CustomerRef): NotFoundError {
  return 'id' in ref
    ? new NotFoundError(`Customer ${ref.id} not found`, { field: 'customer_id', customer_id: ref.id })
    : new NotFoundError(`Customer with external id ${ref.externalId} not found`, { field: 'external_customer_id', external_customer_id: ref.externalId });
}

const live = (c: KnownCustomer | undefined, scope: Scope) => !!c && !c.deleted && c.tenantId === scope.tenantId && c.environmentId === scope.environmentId;

export interface CustomerDirectoryDeps {
  db: Db;
  store: ProjectionStore;
  /** The customer service, asked for a customer the projection has not seen yet. */
  lookup: CustomerLookup;
  clock: () => Date;
}

/**
 * A customer by id or external id: the projection first (the reads of concurrent checks of a
 * tenant and environment in at most two statements, ADR 0025), and for one not seen yet
 * (created a moment ago, its event still on the way) the customer service itself; what it
 * answers is remembered.
 */
export class CustomerDirectory {
  private readonly loaders = new Map<string, Coalescer<CustomerRef, KnownCustomer | undefined>>();
  private readonly db: Db;
  private readonly store: ProjectionStore;
  private readonly lookup: CustomerLookup;
  private readonly clock: () => Date;

  constructor(deps: CustomerDirectoryDeps) {
    ({ db: this.db, store: this.store, lookup: this.lookup, clock: this.clock } = deps);
  }

  async resolve(scope: Scope, ref: CustomerRef, requestId: string): Promise<KnownCustomer> {
    const key = `${scope.tenantId}|${scope.environmentId}`;
    let loader = this.loaders.get(key);
    if (!loader) {
      loader = new Coalescer((refs) => this.read(scope, refs));
      this.loaders.set(key, loader);
    }
    const known = await loader.load(ref);
    if (known) {
      if (!live(known, scope)) throw notFound(ref);
      return known;
    }
    const found = await this.lookup.find(scope, ref, requestId);
    if (!found) throw notFound(ref);
    await this.store.remember(this.db, scope, found.id, found.externalId, this.clock());
    const remembered = await this.store.customer(this.db, found.id);
    if (!live(remembered, scope)) throw notFound(ref);
    return remembered!;
  }

  /** By id: any row (a deleted one answers 404 without asking); by external id: only live ones (an id may be reused after a deletion). */
  private async read(scope: Scope, refs: CustomerRef[]): Promise<Array<KnownCustomer | undefined>> {
    const ids = refs.flatMap((r) => ('id' in r ? [r.id] : []));
    const externalIds = refs.flatMap((r) => ('externalId' in r ? [r.externalId] : []));
    const [byId, byExternalId] = await Promise.all([this.store.customersByIds(this.db, ids), this.store.customersByExternalIds(this.db, scope, externalIds)]);
    return refs.map((r) => ('id' in r ? byId.get(r.id) : byExternalId.get(r.externalId)));
  }
}
