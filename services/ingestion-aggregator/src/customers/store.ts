import type { Trx } from '@billstream/db';
import { PROJECTION_LOCK, scopeLockKey, scopeOf } from './lock';

export interface CustomerRef {
  tenantId: string;
  environmentId: string;
  customerId: string;
  externalId: string;
  /** When the customer service made the change (the domain event's occurred_at). */
  changedAt: string;
}

/**
 * The ingestion projection of customers (external id -> customer id). Every change holds the
 * scope's projection lock exclusively, so events stored before it are filled in by it and
 * events stored after it resolve through it.
 */
export class CustomerProjectionStore {
  private async lock(trx: Trx, ref: CustomerRef): Promise<void> {
    await trx.raw('SELECT pg_advisory_xact_lock(?, ?)', [PROJECTION_LOCK, scopeLockKey(scopeOf(ref.tenantId, ref.environmentId))]);
  }

  /** Records the customer (created or updated) and fills customer_id of its unresolved events. */
  async upsert(trx: Trx, ref: CustomerRef): Promise<number> {
    await this.lock(trx, ref);
    await trx('customers')
      .insert({
        tenant_id: ref.tenantId,
        environment_id: ref.environmentId,
        customer_id: ref.customerId,
        external_id: ref.externalId,
        deleted_at: null,
        updated_at: ref.changedAt,
      })
      .onConflict(['tenant_id', 'environment_id', 'customer_id'])
      .merge(['external_id', 'deleted_at', 'updated_at']);
    return trx('events')
      .where({
        tenant_id: ref.tenantId,
        environment_id: ref.environmentId,
        external_customer_id: ref.externalId,
      })
      .whereNull('customer_id')
      .update({ customer_id: ref.customerId });
  }

  /** A deleted customer no longer resolves; its stored events keep their customer_id. */
  async markDeleted(trx: Trx, ref: CustomerRef): Promise<void> {
    await this.lock(trx, ref);
    await trx('customers')
      .insert({
        tenant_id: ref.tenantId,
        environment_id: ref.environmentId,
        customer_id: ref.customerId,
        external_id: ref.externalId,
        deleted_at: ref.changedAt,
        updated_at: ref.changedAt,
      })
      .onConflict(['tenant_id', 'environment_id', 'customer_id'])
      .merge(['deleted_at', 'updated_at']);
  }
}
