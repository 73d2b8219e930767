import type { Conn, Trx } from '@billstream/db';
import type { Scope } from '@billstream/contracts';

export interface KnownCustomer {
  id: string;
  tenantId: string;
  environmentId: string;
  deleted: boolean;
}

interface CustomerRow {
  id: string;
  tenant_id: string;
  environment_id: string;
  deleted_at: Date | null;
}

function fromRow(row: CustomerRow): KnownCustomer {
  return { id: row.id, tenantId: row.tenant_id, environmentId: row.environment_id, deleted: row.deleted_at !== null };
}

/**
 * The wallet service's projection of customers (from customer-events and lookups).
 * Stateless, connection first, then the Scope. Customer ids are unique across tenants, so
 * reads go by id alone and give the customer's scope back (the directory compares it).
 */
export class CustomerStore {
  async find(conn: Conn, id: string): Promise<KnownCustomer | undefined> {
    const row = await conn<CustomerRow>('customers').where({ id }).first();
    return row && fromRow(row);
  }

  /** Locks the customer against deletion until the transaction ends (wallet creation). */
  async findForShare(trx: Trx, id: string): Promise<KnownCustomer | undefined> {
    const row = await trx<CustomerRow>('customers').where({ id }).forShare().first();
    return row && fromRow(row);
  }

  /** The known customers of `ids`, in one statement. */
  async findMany(conn: Conn, ids: string[]): Promise<KnownCustomer[]> {
    if (ids.length === 0) return [];
    const rows = await conn<CustomerRow>('customers').whereIn('id', ids);
    return rows.map((r) => fromRow(r as CustomerRow));
  }

  /** `findForShare` for several customers in one statement (id order). */
  async findManyForShare(trx: Trx, ids: string[]): Promise<KnownCustomer[]> {
    if (ids.length === 0) return [];
    const rows = await trx<CustomerRow>('customers').whereIn('id', ids).orderBy('id').forShare();
    return rows.map((r) => fromRow(r as CustomerRow));
  }

  /** Records a customer that exists; never revives one already known as deleted. */
  async remember(conn: Conn, scope: Scope, id: string, at: Date): Promise<void> {
    await conn('customers')
      .insert({ id, tenant_id: scope.tenantId, environment_id: scope.environmentId, updated_at: at })
      .onConflict('id')
      .ignore();
  }

  /** Marks a customer deleted (inserting the tombstone when it was never seen). */
  async markDeleted(trx: Trx, scope: Scope, id: string, at: Date): Promise<void> {
    await trx('customers')
      .insert({ id, tenant_id: scope.tenantId, environment_id: scope.environmentId, deleted_at: at, updated_at: at })
      .onConflict('id')
      .merge({ deleted_at: at, updated_at: at });
  }
}
