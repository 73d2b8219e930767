import type { Scope, TaxType } from '@billstream/contracts';
import { pageOf, type Conn } from '@billstream/db';
import Decimal from 'decimal.js';

/** A tax rate (docs/api/taxes.md): its percentage is fixed for life, so invoices that bore it never move. */
export interface TaxRate {
  id: string;
  tenantId: string;
  environmentId: string;
  code: string;
  name: string;
  /** As written, without trailing zeros ("19", "7.25"). */
  percentage: string;
  taxType: TaxType;
  country: string | null;
  region: string | null;
  description: string | null;
  active: boolean;
  createdAt: Date;
  updatedAt: Date;
}

export interface TaxRateListQuery {
  country?: string;
  active?: boolean;
  limit: number;
  offset: number;
}

interface TaxRateRow {
  id: string;
  tenant_id: string;
  environment_id: string;
  code: string;
  name: string;
  percentage: string;
  tax_type: TaxType;
  country: string | null;
  region: string | null;
  description: string | null;
  active: boolean;
  created_at: Date;
  updated_at: Date;
}

const fromRow = (r: TaxRateRow): TaxRate => ({
  id: r.id,
  tenantId: r.tenant_id,
  environmentId: r.environment_id,
  code: r.code,
  name: r.name,
  percentage: new Decimal(r.percentage).toFixed(),
  taxType: r.tax_type,
  country: r.country,
  region: r.region,
  description: r.description,
  active: r.active,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const scoped = (conn: Conn, scope: Scope) => conn<TaxRateRow>('tax_rates').where({ tenant_id: scope.tenantId, environment_id: scope.environmentId });

export class TaxRateStore {
  async insert(conn: Conn, t: TaxRate): Promise<void> {
    await conn('tax_rates').insert({
      id: t.id,
      tenant_id: t.tenantId,
      environment_id: t.environmentId,
      code: t.code,
      name: t.name,
      percentage: t.percentage,
      tax_type: t.taxType,
      country: t.country,
      region: t.region,
      description: t.description,
      active: t.active,
      created_at: t.createdAt,
      updated_at: t.updatedAt,
    });
  }

  async get(conn: Conn, scope: Scope, id: string): Promise<TaxRate | undefined> {
    const row = await scoped(conn, scope).where({ id }).first();
    return row && fromRow(row);
  }

  /** Every rate of the environment, archived ones too (which rates a line bears decides among them). */
  async all(conn: Conn, scope: Scope): Promise<TaxRate[]> {
    return (await scoped(conn, scope).orderBy([{ column: 'created_at' }, { column: 'id' }])).map(fromRow);
  }

  async getMany(conn: Conn, scope: Scope, ids: readonly string[]): Promise<TaxRate[]> {
    if (ids.length === 0) return [];
    return (await scoped(conn, scope).whereIn('id', [...ids])).map(fromRow);
  }

  list(conn: Conn, scope: Scope, q: TaxRateListQuery): Promise<{ items: TaxRate[]; total: number }> {
    const filtered = () => {
      const b = scoped(conn, scope);
      if (q.country !== undefined) b.where({ country: q.country });
      if (q.active !== undefined) b.where({ active: q.active });
      return b;
    };
    return pageOf(filtered, q, fromRow);
  }

  async update(conn: Conn, scope: Scope, id: string, changes: { name?: string; description?: string | null; active?: boolean }, at: Date): Promise<TaxRate | undefined> {
    const set: Record<string, unknown> = { updated_at: at };
    if (changes.name !== undefined) set.name = changes.name;
    if (changes.description !== undefined) set.description = changes.description;
    if (changes.active !== undefined) set.active = changes.active;
    const rows = await scoped(conn, scope).where({ id }).update(set).returning('*');
    return rows[0] && fromRow(rows[0] as TaxRateRow);
  }
}
