import type { Scope } from '@billstream/contracts';
import type { Trx } from '@billstream/db';
import { PROJECTION_LOCK, scopeLockKey, scopeOf } from './lock';

/** A customer as the ingestion projection knows it. */
export interface ProjectedCustomer {
  customerId: string;
  externalId: string;
  /** When the customer service made the change (the domain event's occurred_at). */
  changedAt: string;
}

/**
 * The ingestion projection of customers (external id -> customer id); holds no connection.
 * Every change holds the scope's projection lock exclusively, so events stored before it are
 * filled in by it and events stored after it resolve through it.
 */
export class CustomerProjectionStore {
  private async lock(trx: Trx, scope: Scope): Promise<void> {
    await trx.raw('SELECT pg_advisory_xact_lock(?, ?)', [PROJECTION_LOCK, scopeLockKey(scopeOf(scope.tenantId, scope.environmentId))]);
  }

  /** Records the customer (created or updated) and fills customer_id of its unresolved events. */
  async upsert(trx: Trx, scope: Scope, customer: ProjectedCustomer): Promise<number> {
    await this.lock(trx, scope);
    await trx('customers')
      .insert({
        tenant_id: scope.tenantId,
        environment_id: scope.environmentId,
        customer_id: customer.customerId,
        external_id: customer.externalId,
        deleted_at: null,
        updated_at: customer.changedAt,
      })
      .onConflict(['tenant_id', 'environment_id', 'customer_id'])
      .merge(['external_id', 'deleted_at', 'updated_at']);
    return trx('events')
      .where({
        tenant_id: scope.tenantId,
        environment_id: scope.environmentId,
        external_customer_id: customer.externalId,
      })
      .whereNull('customer_id')
      .update({ customer_id: customer.customerId });
  }

  /** A deleted customer no longer resolves; its stored events keep their customer_id. */
  async markDeleted(trx: Trx, scope: Scope, customer: ProjectedCustomer): Promise<void> {
    await this.lock(trx, scope);
    await trx('customers')
      .insert({
        tenant_id: scope.tenantId,
        environment_id: scope.environmentId,
        customer_id: customer.customerId,
        external_id: customer.externalId,
        deleted_at: customer.changedAt,
        updated_at: customer.changedAt,
      })
      .onConflict(['tenant_id', 'environment_id', 'customer_id'])
      .merge(['deleted_at', 'updated_at']);
  }
}
