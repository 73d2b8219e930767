import type { Scope } from '@billstream/contracts';
import type { Conn } from '@billstream/db';

export interface KnownCustomer {
  id: string;
  tenantId: string;
  environmentId: string;
  externalId: string;
  deleted: boolean;
}

interface CustomerRow {
  id: string;
  tenant_id: string;
  environment_id: string;
  external_id: string;
  deleted_at: Date | null;
}

const fromRow = (r: CustomerRow): KnownCustomer => ({
  id: r.id,
  tenantId: r.tenant_id,
  environmentId: r.environment_id,
  externalId: r.external_id,
  deleted: r.deleted_at !== null,
});

/** Told of every write of a customer's record, on the connection that wrote it (the check's cache, ADR 0026). */
export type CustomerWritten = (conn: Conn, scope: Scope, customerId: string) => void;

/** Billing's projection of customers (from customer-events and lookups): id, scope, external id. */
export class CustomerStore {
  constructor(private readonly written: CustomerWritten = () => undefined) {}

  async getById(conn: Conn, id: string): Promise<KnownCustomer | undefined> {
    const row = await conn<CustomerRow>('customers').where({ id }).first();
    return row && fromRow(row);
  }

  /** Known customers by id (the period job's batch). */
  async getByIds(conn: Conn, ids: string[]): Promise<Map<string, KnownCustomer>> {
    if (ids.length === 0) return new Map();
    const rows = await conn<CustomerRow>('customers').whereIn('id', [...new Set(ids)]);
    return new Map(rows.map((r) => [r.id, fromRow(r as CustomerRow)]));
  }

  /** Known live customers of the tenant and environment by external id (the entitlement check's batch). */
  async getByExternalIds(conn: Conn, scope: Scope, externalIds: string[]): Promise<Map<string, KnownCustomer>> {
    if (externalIds.length === 0) return new Map();
    const rows = await conn<CustomerRow>('customers')
      .where({ tenant_id: scope.tenantId, environment_id: scope.environmentId, deleted_at: null })
      .whereIn('external_id', [...new Set(externalIds)]);
    return new Map(rows.map((r) => [r.external_id, fromRow(r as CustomerRow)]));
  }

  async getByExternalId(conn: Conn, scope: Scope, externalId: string): Promise<KnownCustomer | undefined> {
    const row = await conn<CustomerRow>('customers')
      .where({ tenant_id: scope.tenantId, environment_id: scope.environmentId, external_id: externalId, deleted_at: null })
      .first();
    return row && fromRow(row);
  }

  /** Records a customer that exists or changed its external id; never revives one known as deleted. */
  async remember(conn: Conn, scope: Scope, id: string, externalId: string, at: Date): Promise<void> {
    await conn('customers')
      .insert({ id, tenant_id: scope.tenantId, environment_id: scope.environmentId, external_id: externalId, updated_at: at })
      .onConflict('id')
      .merge({ external_id: externalId, updated_at: at });
    this.written(conn, scope, id);
  }

  /** Marks a customer deleted (inserting the tombstone when it was never seen). */
  async markDeleted(conn: Conn, scope: Scope, id: string, externalId: string, at: Date): Promise<void> {
    await conn('customers')
      .insert({ id, tenant_id: scope.tenantId, environment_id: scope.environmentId, external_id: externalId, deleted_at: at, updated_at: at })
      .onConflict('id')
      .merge({ deleted_at: at, updated_at: at });
    this.written(conn, scope, id);
  }
}
