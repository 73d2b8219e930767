import type { Scope } from '@billstream/contracts';
import type { Conn } from '@billstream/db';

export interface KnownCustomer {
  id: string;
  tenantId: string;
  environmentId: string;
  externalId: string;
  deleted: boolean;
  /** Its parent as customer-events or a lookup last told it (null: none, or not told yet; ADR 0047). */
  parentCustomerId: string | null;
  /** What customer-events told of the customer (null until an event did): the buyer on invoice documents. */
  details: CustomerDetails | null;
  /** Its tax identity (none, no ids, no rates until an event told otherwise). */
  tax: CustomerTax;
}

/** The buyer of invoice documents: name, email and address as the customer service last published them. */
export interface CustomerDetails {
  name: string | null;
  email: string | null;
  address: Record<string, string | null> | null;
}

/** What decides the rates the customer's lines bear (docs/api/taxes.md#which-rates-a-line-bears), as customer-events last told it. */
export interface CustomerTax {
  taxExempt: 'none' | 'exempt' | 'reverse';
  taxIds: Array<{ type: string; value: string }>;
  taxRateIds: string[];
}

interface CustomerRow {
  id: string;
  tenant_id: string;
  environment_id: string;
  external_id: string;
  deleted_at: Date | null;
  parent_customer_id?: string | null;
  name?: string | null;
  email?: string | null;
  address?: Record<string, string | null> | null;
  tax_exempt?: CustomerTax['taxExempt'];
  tax_ids?: CustomerTax['taxIds'];
  tax_rate_ids?: string[];
}

const fromRow = (r: CustomerRow): KnownCustomer => ({
  id: r.id,
  tenantId: r.tenant_id,
  environmentId: r.environment_id,
  externalId: r.external_id,
  deleted: r.deleted_at !== null,
  parentCustomerId: r.parent_customer_id ?? null,
  details: r.name != null || r.email != null || r.address != null ? { name: r.name ?? null, email: r.email ?? null, address: r.address ?? null } : null,
  tax: { taxExempt: r.tax_exempt ?? 'none', taxIds: r.tax_ids ?? [], taxRateIds: r.tax_rate_ids ?? [] },
});

/** How deep `descendants` walks (the customer service refuses cycles; this only bounds a moment's inconsistency). */
const MAX_DEPTH = 64;

/** Billing's projection of customers (from customer-events and lookups): id, scope, external id. */
export class CustomerStore {
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

  async getByExternalId(conn: Conn, scope: Scope, externalId: string): Promise<KnownCustomer | undefined> {
    const row = await conn<CustomerRow>('customers')
      .where({ tenant_id: scope.tenantId, environment_id: scope.environmentId, external_id: externalId, deleted_at: null })
      .first();
    return row && fromRow(row);
  }

  /**
   * Records a customer that exists or changed its external id; never revives one known as
   * deleted. `details`, `parentCustomerId` and `tax` are written when given (undefined: kept).
   */
  async remember(conn: Conn, scope: Scope, id: string, externalId: string, at: Date, details?: CustomerDetails, parentCustomerId?: string | null, tax?: CustomerTax): Promise<void> {
    const known = {
      ...(details ? { name: details.name, email: details.email, address: details.address && JSON.stringify(details.address) } : {}),
      ...(tax ? { tax_exempt: tax.taxExempt, tax_ids: JSON.stringify(tax.taxIds), tax_rate_ids: JSON.stringify(tax.taxRateIds) } : {}),
      ...(parentCustomerId !== undefined ? { parent_customer_id: parentCustomerId } : {}),
    };
    await conn('customers')
      .insert({ id, tenant_id: scope.tenantId, environment_id: scope.environmentId, external_id: externalId, updated_at: at, ...known })
      .onConflict('id')
      .merge({ external_id: externalId, updated_at: at, ...known });
  }

  /**
   * The customer's descendants the projection knows (children, their children, ...), deleted
   * ones too: their invoices stay theirs (ADR 0047). Depth-limited against a cycle the events
   * could show for a moment while a customer moves.
   */
  async descendants(conn: Conn, scope: Scope, id: string): Promise<string[]> {
    const { rows } = await conn.raw<{ rows: Array<{ id: string }> }>(
      `WITH RECURSIVE tree(id, depth) AS (
         SELECT c.id, 1 FROM customers c WHERE c.tenant_id = ? AND c.environment_id = ? AND c.parent_customer_id = ?
         UNION
         SELECT c.id, tree.depth + 1 FROM customers c JOIN tree ON c.parent_customer_id = tree.id
          WHERE c.tenant_id = ? AND c.environment_id = ? AND tree.depth < ?
       )
       SELECT DISTINCT id FROM tree WHERE id <> ? ORDER BY id`,
      [scope.tenantId, scope.environmentId, id, scope.tenantId, scope.environmentId, MAX_DEPTH, id],
    );
    return rows.map((r) => r.id);
  }

  /** Marks a customer deleted (inserting the tombstone when it was never seen). */
  async markDeleted(conn: Conn, scope: Scope, id: string, externalId: string, at: Date): Promise<void> {
    await conn('customers')
      .insert({ id, tenant_id: scope.tenantId, environment_id: scope.environmentId, external_id: externalId, deleted_at: at, updated_at: at })
      .onConflict('id')
      .merge({ deleted_at: at, updated_at: at });
  }
}
