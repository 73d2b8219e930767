import type { Scope } from '@billstream/contracts';
import { pageOf, type Conn, type Trx } from '@billstream/db';
import type { Plan, PlanChanges, PlanListQuery } from './domain';

interface PlanRow {
  id: string;
  tenant_id: string;
  environment_id: string;
  name: string;
  lookup_key: string | null;
  description: string | null;
  metadata: Record<string, string>;
  status: Plan['status'];
  tax_rate_ids: string[] | string;
  version: number;
  created_at: Date;
  updated_at: Date;
}

function fromRow(r: PlanRow): Plan {
  return {
    id: r.id,
    tenantId: r.tenant_id,
    environmentId: r.environment_id,
    name: r.name,
    lookupKey: r.lookup_key,
    description: r.description,
    metadata: r.metadata,
    status: r.status,
    taxRateIds: (typeof r.tax_rate_ids === 'string' ? JSON.parse(r.tax_rate_ids) : r.tax_rate_ids) ?? [],
    version: r.version,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

const scoped = (conn: Conn, scope: Scope) =>
  conn<PlanRow>('plans').where({ tenant_id: scope.tenantId, environment_id: scope.environmentId });

export class PlanStore {
  async insert(conn: Conn, plan: Plan): Promise<void> {
    await conn('plans').insert({
      id: plan.id,
      tenant_id: plan.tenantId,
      environment_id: plan.environmentId,
      name: plan.name,
      lookup_key: plan.lookupKey,
      description: plan.description,
      metadata: JSON.stringify(plan.metadata),
      status: plan.status,
      tax_rate_ids: JSON.stringify(plan.taxRateIds),
      version: plan.version,
      created_at: plan.createdAt,
      updated_at: plan.updatedAt,
    });
  }

  /** The rates each plan names (docs/api/taxes.md#which-rates-a-line-bears), by plan id. */
  async taxRateIdsOf(conn: Conn, scope: Scope, ids: string[]): Promise<Map<string, string[]>> {
    if (ids.length === 0) return new Map();
    const rows = await conn('plans').where({ tenant_id: scope.tenantId, environment_id: scope.environmentId }).whereIn('id', [...new Set(ids)]).select('id', 'tax_rate_ids');
    return new Map(rows.map((r: { id: string; tax_rate_ids: string[] | null }) => [r.id, r.tax_rate_ids ?? []]));
  }

  async get(conn: Conn, scope: Scope, id: string): Promise<Plan | undefined> {
    const row = await scoped(conn, scope).where({ id }).first();
    return row && fromRow(row);
  }

  /** The plan, locked until the transaction ends (an update checks its version first). */
  async getForUpdate(trx: Trx, scope: Scope, id: string): Promise<Plan | undefined> {
    const row = await scoped(trx, scope).where({ id }).forUpdate().first();
    return row && fromRow(row);
  }

  /** Locks the plan until the transaction ends: its status cannot change under a new subscription or price. */
  async getForShare(trx: Trx, scope: Scope, id: string): Promise<Plan | undefined> {
    const row = await scoped(trx, scope).where({ id }).forShare().first();
    return row && fromRow(row);
  }

  async list(conn: Conn, scope: Scope, q: PlanListQuery): Promise<{ items: Plan[]; total: number }> {
    const filtered = () => {
      const b = scoped(conn, scope);
      if (q.status) b.where({ status: q.status });
      if (q.lookupKey) b.where({ lookup_key: q.lookupKey });
      return b;
    };
    return pageOf(filtered, q, fromRow);
  }

  async update(conn: Conn, scope: Scope, id: string, changes: PlanChanges & { status?: Plan['status'] }, at: Date): Promise<Plan | undefined> {
    const set: Record<string, unknown> = { updated_at: at, version: conn.raw('version + 1') };
    if (changes.name !== undefined) set.name = changes.name;
    if (changes.description !== undefined) set.description = changes.description;
    if (changes.metadata !== undefined) set.metadata = JSON.stringify(changes.metadata);
    if (changes.status !== undefined) set.status = changes.status;
    if (changes.taxRateIds !== undefined) set.tax_rate_ids = JSON.stringify(changes.taxRateIds);
    const rows = await scoped(conn, scope).where({ id }).update(set).returning('*');
    return rows[0] && fromRow(rows[0] as PlanRow);
  }
}
