import type { Scope } from '@billstream/contracts';
import { TOPICS } from '@billstream/bus';
import type { Conn, Db, Trx } from '@billstream/db';
import { NotFoundError, ValidationError, VersionConflictError } from '@billstream/errors';
import { etagOf, matchesIfMatch } from '@billstream/http';
import { newId } from '@billstream/ids';
import { newDomainEvent, writeOutbox, type EventContext } from '@billstream/outbox';
import {
  hasChildrenError,
  type Customer,
  type CustomerAddress,
  type CustomerListQuery,
  type CustomerPage,
  type CustomerStatus,
} from './customer';
import type { CustomerStore } from './store';
import { paysSubscriptionsError, type PayerCheck } from './payers';
import { toCustomerView } from './view';
import { assertTaxIds, type TaxExempt, type TaxId } from './tax-ids';
import { noTaxRates, type TaxRateCheck } from './tax-rates';

export interface NewCustomer {
  externalId: string;
  name: string | null;
  email: string | null;
  address: CustomerAddress;
  taxIds: TaxId[];
  taxExempt: TaxExempt;
  taxRateIds: string[];
  parentCustomerId: string | null;
  metadata: Record<string, string>;
  status: CustomerStatus;
}

/** Fields to change; an absent field keeps its value, null clears it. */
export type CustomerChanges = Partial<Omit<NewCustomer, 'address'>> & { address?: Partial<CustomerAddress> };

/** Which customer an update names: by id, or by the client's external id. */
export type CustomerRef = { id: string } | { externalId: string };

export type CustomerEventType = 'customer.created' | 'customer.updated' | 'customer.deleted';

const scopeOf = (ctx: EventContext): Scope => ({ tenantId: ctx.tenantId, environmentId: ctx.environmentId });

function notFound(ref: CustomerRef): NotFoundError {
  return 'id' in ref
    ? new NotFoundError(`Customer ${ref.id} not found`, { field: 'id', value: ref.id })
    : new NotFoundError(`Customer with external id ${ref.externalId} not found`, {
        field: 'external_customer_id',
        value: ref.externalId,
      });
}

function applyChanges(c: Customer, changes: CustomerChanges): Customer {
  const address = { ...c.address };
  for (const [k, v] of Object.entries(changes.address ?? {}) as Array<[keyof CustomerAddress, string | null | undefined]>) {
    if (v !== undefined) address[k] = v;
  }
  return {
    ...c,
    externalId: changes.externalId ?? c.externalId,
    name: changes.name !== undefined ? changes.name : c.name,
    email: changes.email !== undefined ? changes.email : c.email,
    address,
    taxIds: changes.taxIds ?? c.taxIds,
    taxExempt: changes.taxExempt ?? c.taxExempt,
    taxRateIds: changes.taxRateIds ?? c.taxRateIds,
    parentCustomerId: changes.parentCustomerId !== undefined ? changes.parentCustomerId : c.parentCustomerId,
    metadata: changes.metadata ?? c.metadata,
    status: changes.status ?? c.status,
  };
}

/** The view with metadata keys in one order, so equal contents compare equal. */
function canonical(c: Customer): string {
  const metadata = Object.fromEntries(Object.entries(c.metadata).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)));
  return JSON.stringify(toCustomerView({ ...c, metadata }));
}

/** True when two versions of a customer differ in a field a client can see. */
function differs(a: Customer, b: Customer): boolean {
  return canonical(a) !== canonical(b);
}

/**
 * Customers: create, read, update, delete and list within one tenant and environment,
 * each change committed together with its event in the outbox.
 */
export class CustomerService {
  constructor(
    private readonly db: Db,
    private readonly store: CustomerStore,
    /** Called after a commit that wrote outbox rows (wakes the relay). */
    private readonly onEventsWritten: () => void,
    /** Billing's answer to whether the customer pays others' subscriptions; absent: a deployment without billing. */
    private readonly payers?: PayerCheck,
    /** Billing's tax rates (the ones a customer names must exist and be active). */
    private readonly taxRates: TaxRateCheck = noTaxRates,
  ) {}

  async create(ctx: EventContext, input: NewCustomer, requestId = 'customer-create'): Promise<Customer> {
    assertTaxIds(input.taxIds);
    const scope = scopeOf(ctx);
    await this.taxRates.assertActive(scope, input.taxRateIds, requestId);
    const now = new Date();
    const customer: Customer = {
      id: newId('customer'),
      tenantId: scope.tenantId,
      environmentId: scope.environmentId,
      ...input,
      version: 1,
      createdAt: now,
      updatedAt: now,
    };
    await this.db.transaction(async (trx) => {
      if (customer.parentCustomerId) await this.requireParent(trx, scope, customer.parentCustomerId);
      await this.store.insert(trx, customer);
      await this.publish(trx, ctx, 'customer.created', customer);
    });
    this.onEventsWritten();
    return customer;
  }

  async get(scope: Scope, ref: CustomerRef): Promise<Customer> {
    const found =
      'id' in ref
        ? await this.store.findById(this.db, scope, ref.id)
        : await this.store.findByExternalId(this.db, scope, ref.externalId);
    if (!found) throw notFound(ref);
    return found;
  }

  /**
   * Applies changes under a row lock. `ifMatch` (the If-Match header) must name the current
   * ETag (or be `*` or absent), else version_conflict. A change that alters nothing publishes nothing.
   */
  async update(ctx: EventContext, ref: CustomerRef, changes: CustomerChanges, ifMatch?: string, requestId = 'customer-update'): Promise<Customer> {
    if (changes.taxIds) assertTaxIds(changes.taxIds);
    const scope = scopeOf(ctx);
    if (changes.taxRateIds) await this.taxRates.assertActive(scope, changes.taxRateIds, requestId);
    let changed = false;
    const result = await this.db.transaction(async (trx) => {
      // Hierarchy lock before the row lock: every mover takes them in this order (no deadlock).
      if (changes.parentCustomerId) await this.store.lockHierarchy(trx, scope);
      const current =
        'id' in ref
          ? await this.store.findById(trx, scope, ref.id, true)
          : await this.store.findByExternalId(trx, scope, ref.externalId, true);
      if (!current) throw notFound(ref);
      if (!matchesIfMatch(ifMatch, etagOf(current.version))) {
        throw new VersionConflictError(`Customer ${current.id} was modified by another request; read it again`, {
          field: 'If-Match',
          current_etag: etagOf(current.version),
        });
      }
      const next = applyChanges(current, changes);
      if (!differs(current, next)) return current;
      if (next.parentCustomerId && next.parentCustomerId !== current.parentCustomerId) {
        await this.checkNewParent(trx, scope, current.id, next.parentCustomerId);
      }
      const updatedAt = new Date(Math.max(Date.now(), current.updatedAt.getTime()));
      const saved: Customer = { ...next, version: current.version + 1, updatedAt };
      await this.store.update(trx, saved);
      await this.publish(trx, ctx, 'customer.updated', saved);
      changed = true;
      return saved;
    });
    if (changed) this.onEventsWritten();
    return result;
  }

  /**
   * Deletes a customer without children that pays no live subscription of another customer
   * (billing is asked first, ADR 0047: a subscription made in the moment after the answer is
   * paid by its own customer once billing learns of the deletion).
   */
  async delete(ctx: EventContext, id: string, requestId = 'customer-delete'): Promise<void> {
    const scope = scopeOf(ctx);
    if (this.payers) {
      const existing = await this.store.findById(this.db, scope, id);
      if (!existing) throw notFound({ id });
      const paid = await this.payers.payingFor(scope, id, requestId);
      if (paid.count > 0) throw paysSubscriptionsError(id, paid);
    }
    await this.db.transaction(async (trx) => {
      const current = await this.store.findById(trx, scope, id, true);
      if (!current) throw notFound({ id });
      const children = await this.store.countChildren(trx, scope, id);
      if (children > 0) throw hasChildrenError(id, children);
      await this.store.delete(trx, scope, id);
      await this.publish(trx, ctx, 'customer.deleted', current);
    });
    this.onEventsWritten();
  }

  list(scope: Scope, query: CustomerListQuery): Promise<CustomerPage> {
    return this.store.list(this.db, scope, query);
  }

  /** The parents of these customers, by id (for `expand=parent_customer`). */
  async parentsOf(scope: Scope, customers: Customer[]): Promise<Map<string, Customer>> {
    const ids = [...new Set(customers.map((c) => c.parentCustomerId).filter((id): id is string => id !== null))];
    const parents = await this.store.findManyByIds(this.db, scope, ids);
    return new Map(parents.map((p) => [p.id, p]));
  }

  private async requireParent(trx: Conn, scope: Scope, parentId: string): Promise<void> {
    const parent = await this.store.findById(trx, scope, parentId);
    if (!parent) {
      throw new NotFoundError(`Parent customer ${parentId} not found`, { field: 'parent_customer_id', value: parentId });
    }
  }

  /** Runs under the hierarchy lock: the parent exists and is not the customer or below it. */
  private async checkNewParent(trx: Conn, scope: Scope, id: string, parentId: string): Promise<void> {
    if (parentId === id) {
      throw new ValidationError('A customer cannot be its own parent', { field: 'parent_customer_id', value: parentId });
    }
    await this.requireParent(trx, scope, parentId);
    const lineage = await this.store.lineage(trx, scope, parentId);
    if (lineage.includes(id)) {
      throw new ValidationError(`Customer ${parentId} is a descendant of ${id}; the hierarchy cannot have a cycle`, {
        field: 'parent_customer_id',
        value: parentId,
      });
    }
  }

  private async publish(trx: Trx, ctx: EventContext, type: CustomerEventType, c: Customer): Promise<void> {
    const event = newDomainEvent(type, ctx, { customer: toCustomerView(c) });
    await writeOutbox(trx, TOPICS.customerEvents, c.id, event);
  }
}
