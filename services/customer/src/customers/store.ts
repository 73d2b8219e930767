import type { TaxExempt, TaxId } from './tax-ids';
import type { Scope } from '@billstream/contracts';
import { rowsOf, type Conn, type Knex } from '@billstream/db';
import { AlreadyExistsError, NotFoundError, pgErrorCode, PG_UNIQUE_VIOLATION } from '@billstream/errors';
import {
  hasChildrenError,
  type Customer,
  type CustomerFilter,
  type CustomerListQuery,
  type CustomerPage,
  type CustomerStatus,
} from './customer';

const TABLE = 'customers';
const COUNTS_TABLE = 'customer_counts';
const PG_FOREIGN_KEY_VIOLATION = '23503';

export interface CustomerRow {
  id: string;
  tenant_id: string;
  environment_id: string;
  external_id: string;
  name: string | null;
  email: string | null;
  address_line1: string | null;
  address_line2: string | null;
  address_city: string | null;
  address_state: string | null;
  address_postal_code: string | null;
  address_country: string | null;
  tax_ids: TaxId[] | string;
  tax_exempt: string;
  tax_rate_ids: string[] | string;
  parent_customer_id: string | null;
  metadata: Record<string, string> | string;
  status: string;
  version: number;
  created_at: Date;
  updated_at: Date;
}

export function toCustomer(row: CustomerRow): Customer {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    environmentId: row.environment_id,
    externalId: row.external_id,
    name: row.name,
    email: row.email,
    address: {
      line1: row.address_line1,
      line2: row.address_line2,
      city: row.address_city,
      state: row.address_state,
      postalCode: row.address_postal_code,
      country: row.address_country,
    },
    taxIds: typeof row.tax_ids === 'string' ? JSON.parse(row.tax_ids) : row.tax_ids,
    taxExempt: row.tax_exempt as TaxExempt,
    taxRateIds: (typeof row.tax_rate_ids === 'string' ? JSON.parse(row.tax_rate_ids) : row.tax_rate_ids) ?? [],
    parentCustomerId: row.parent_customer_id,
    metadata: typeof row.metadata === 'string' ? JSON.parse(row.metadata) : row.metadata,
    status: row.status as CustomerStatus,
    version: row.version,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}

type CustomerWriteRow = Omit<CustomerRow, 'metadata' | 'tax_ids' | 'tax_rate_ids'> & { metadata: string; tax_ids: string; tax_rate_ids: string };
type MutableColumns = Omit<CustomerWriteRow, 'id' | 'tenant_id' | 'environment_id' | 'created_at'>;

function mutableColumns(c: Customer): MutableColumns {
  return {
    external_id: c.externalId,
    name: c.name,
    email: c.email,
    address_line1: c.address.line1,
    address_line2: c.address.line2,
    address_city: c.address.city,
    address_state: c.address.state,
    address_postal_code: c.address.postalCode,
    address_country: c.address.country,
    tax_ids: JSON.stringify(c.taxIds),
    tax_exempt: c.taxExempt,
    tax_rate_ids: JSON.stringify(c.taxRateIds),
    parent_customer_id: c.parentCustomerId,
    metadata: JSON.stringify(c.metadata),
    status: c.status,
    version: c.version,
    updated_at: c.updatedAt,
  };
}

export function toRow(c: Customer): CustomerWriteRow {
  return {
    id: c.id,
    tenant_id: c.tenantId,
    environment_id: c.environmentId,
    created_at: c.createdAt,
    ...mutableColumns(c),
  };
}

/** Unique and foreign-key violations become the domain errors a client can act on. */
function translateWriteError(err: unknown, c: Customer): unknown {
  const code = pgErrorCode(err);
  const constraint = (err as { constraint?: string }).constraint;
  if (code === PG_UNIQUE_VIOLATION && constraint === 'customers_external_id_unique') {
    return new AlreadyExistsError(`A customer with external id ${c.externalId} already exists`, {
      field: 'external_customer_id',
      value: c.externalId,
    });
  }
  if (code === PG_FOREIGN_KEY_VIOLATION && c.parentCustomerId) {
    return new NotFoundError(`Parent customer ${c.parentCustomerId} not found`, {
      field: 'parent_customer_id',
      value: c.parentCustomerId,
    });
  }
  return err;
}

function applyFilter(q: Knex.QueryBuilder, scope: Scope, f: CustomerFilter): Knex.QueryBuilder {
  q.where({ tenant_id: scope.tenantId, environment_id: scope.environmentId });
  if (f.status) q.where('status', f.status);
  if (f.ids) q.whereIn('id', f.ids);
  if (f.externalIds) q.whereIn('external_id', f.externalIds);
  if (f.externalId !== undefined) q.where('external_id', f.externalId);
  if (f.email !== undefined) q.whereRaw('lower(email) = lower(?)', [f.email]);
  if (f.parentIds) q.whereIn('parent_customer_id', f.parentIds);
  return q;
}

/**
 * Rows of `customer.customers` <-> Customer; every query is confined to one scope. Stateless:
 * every method takes the connection (pool or transaction) first, then the scope.
 */
export class CustomerStore {
  async insert(trx: Conn, c: Customer): Promise<void> {
    try {
      await trx(TABLE).insert(toRow(c));
    } catch (err) {
      throw translateWriteError(err, c);
    }
  }

  async update(trx: Conn, c: Customer): Promise<void> {
    try {
      await trx(TABLE)
        .where({ id: c.id, tenant_id: c.tenantId, environment_id: c.environmentId })
        .update(mutableColumns(c));
    } catch (err) {
      throw translateWriteError(err, c);
    }
  }

  /** Deletes one row; a row that still has children (foreign key) gives hasChildrenError. */
  async delete(trx: Conn, scope: Scope, id: string): Promise<void> {
    try {
      await trx(TABLE).where({ id, tenant_id: scope.tenantId, environment_id: scope.environmentId }).delete();
    } catch (err) {
      throw pgErrorCode(err) === PG_FOREIGN_KEY_VIOLATION ? hasChildrenError(id) : err;
    }
  }

  async findById(conn: Conn, scope: Scope, id: string, forUpdate = false): Promise<Customer | undefined> {
    const q = conn(TABLE).where({ id, tenant_id: scope.tenantId, environment_id: scope.environmentId }).first();
    if (forUpdate) q.forUpdate();
    const row = (await q) as CustomerRow | undefined;
    return row ? toCustomer(row) : undefined;
  }

  async findByExternalId(conn: Conn, scope: Scope, externalId: string, forUpdate = false): Promise<Customer | undefined> {
    const q = conn(TABLE)
      .where({ external_id: externalId, tenant_id: scope.tenantId, environment_id: scope.environmentId })
      .first();
    if (forUpdate) q.forUpdate();
    const row = (await q) as CustomerRow | undefined;
    return row ? toCustomer(row) : undefined;
  }

  async findManyByIds(conn: Conn, scope: Scope, ids: string[]): Promise<Customer[]> {
    if (ids.length === 0) return [];
    const rows: CustomerRow[] = await conn(TABLE)
      .where({ tenant_id: scope.tenantId, environment_id: scope.environmentId })
      .whereIn('id', ids);
    return rows.map(toCustomer);
  }

  async countChildren(trx: Conn, scope: Scope, id: string): Promise<number> {
    const row = (await trx(TABLE)
      .where({ parent_customer_id: id, tenant_id: scope.tenantId, environment_id: scope.environmentId })
      .count({ n: '*' })
      .first()) as { n: number | string } | undefined;
    return Number(row?.n ?? 0);
  }

  /** The id of `customerId` and of every ancestor above it. */
  async lineage(trx: Conn, scope: Scope, customerId: string): Promise<string[]> {
    const result = await trx.raw(
      `WITH RECURSIVE chain AS (
         SELECT id, parent_customer_id FROM ${TABLE} WHERE id = ? AND tenant_id = ? AND environment_id = ?
         UNION
         SELECT c.id, c.parent_customer_id FROM ${TABLE} c JOIN chain ON c.id = chain.parent_customer_id
       ) SELECT id FROM chain`,
      [customerId, scope.tenantId, scope.environmentId],
    );
    return rowsOf<{ id: string }>(result).map((r) => r.id);
  }

  /** Serialises hierarchy changes of one scope, so two concurrent moves cannot form a cycle. */
  async lockHierarchy(trx: Conn, scope: Scope): Promise<void> {
    await trx.raw('SELECT pg_advisory_xact_lock(hashtext(?))', [`customer-hierarchy:${scope.tenantId}:${scope.environmentId}`]);
  }

  async list(conn: Conn, scope: Scope, query: CustomerListQuery): Promise<CustomerPage> {
    const { filter, sort, order, limit, offset } = query;
    const page = applyFilter(conn(TABLE).select('*'), scope, filter)
      .orderBy([
        { column: sort, order },
        { column: 'id', order },
      ])
      .limit(limit)
      .offset(offset);
    const [rows, total] = await Promise.all([page, this.count(conn, scope, filter)]);
    return { items: (rows as CustomerRow[]).map(toCustomer), total };
  }

  /**
   * The size of the filtered set. Unfiltered or by status it is read from customer_counts
   * (kept by triggers); every other filter is selective and counted through its index.
   */
  private async count(conn: Conn, scope: Scope, filter: CustomerFilter): Promise<number> {
    const { status, ...selective } = filter;
    const q = Object.values(selective).every((v) => v === undefined)
      ? conn(COUNTS_TABLE)
          .where({ tenant_id: scope.tenantId, environment_id: scope.environmentId, ...(status ? { status } : {}) })
          .sum({ n: 'n' })
      : applyFilter(conn(TABLE).count({ n: '*' }), scope, filter);
    const row = (await q.first()) as { n: number | string | null } | undefined;
    return Number(row?.n ?? 0);
  }
}
