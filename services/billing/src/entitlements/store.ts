import type { Scope } from '@billstream/contracts';
import { pageOf, type Conn, type Trx } from '@billstream/db';
import { toDecimalString } from '@billstream/money';
import type { Entitlement, EntitlementListQuery, Grant } from './domain';

interface EntitlementRow {
  id: string;
  tenant_id: string;
  environment_id: string;
  plan_id: string;
  feature_id: string;
  feature_type: Entitlement['featureType'];
  is_enabled: boolean;
  usage_limit: string | null;
  usage_reset_period: Entitlement['usageResetPeriod'];
  is_soft_limit: boolean;
  static_value: string | null;
  version: number;
  created_at: Date;
  updated_at: Date;
}

function fromRow(r: EntitlementRow): Entitlement {
  return {
    id: r.id,
    tenantId: r.tenant_id,
    environmentId: r.environment_id,
    planId: r.plan_id,
    featureId: r.feature_id,
    featureType: r.feature_type,
    isEnabled: r.is_enabled,
    usageLimit: r.usage_limit === null ? null : toDecimalString(r.usage_limit),
    usageResetPeriod: r.usage_reset_period,
    isSoftLimit: r.is_soft_limit,
    staticValue: r.static_value,
    version: r.version,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

const grantColumns = (g: Grant) => ({
  is_enabled: g.isEnabled,
  usage_limit: g.usageLimit,
  usage_reset_period: g.usageResetPeriod,
  is_soft_limit: g.isSoftLimit,
  static_value: g.staticValue,
});

const scoped = (conn: Conn, scope: Scope) =>
  conn<EntitlementRow>('entitlements').where({ tenant_id: scope.tenantId, environment_id: scope.environmentId });

export class EntitlementStore {
  async insert(conn: Conn, e: Entitlement): Promise<void> {
    await conn('entitlements').insert({
      id: e.id,
      tenant_id: e.tenantId,
      environment_id: e.environmentId,
      plan_id: e.planId,
      feature_id: e.featureId,
      feature_type: e.featureType,
      ...grantColumns(e),
      version: e.version,
      created_at: e.createdAt,
      updated_at: e.updatedAt,
    });
  }

  async get(conn: Conn, scope: Scope, id: string): Promise<Entitlement | undefined> {
    const row = await scoped(conn, scope).where({ id }).first();
    return row && fromRow(row);
  }

  async getForUpdate(trx: Trx, scope: Scope, id: string): Promise<Entitlement | undefined> {
    const row = await scoped(trx, scope).where({ id }).forUpdate().first();
    return row && fromRow(row);
  }

  /** The entitlements of these plans. */
  async ofPlans(conn: Conn, scope: Scope, planIds: string[]): Promise<Entitlement[]> {
    if (planIds.length === 0) return [];
    return (await scoped(conn, scope).whereIn('plan_id', planIds).orderBy('id')).map(fromRow);
  }

  async list(conn: Conn, scope: Scope, q: EntitlementListQuery): Promise<{ items: Entitlement[]; total: number }> {
    const filtered = () => {
      const b = scoped(conn, scope);
      if (q.planId) b.where({ plan_id: q.planId });
      if (q.featureId) b.where({ feature_id: q.featureId });
      return b;
    };
    return pageOf(filtered, q, fromRow);
  }

  async save(trx: Trx, e: Entitlement): Promise<void> {
    await trx('entitlements').where({ id: e.id }).update({ ...grantColumns(e), version: e.version, updated_at: e.updatedAt });
  }

  async delete(trx: Trx, id: string): Promise<void> {
    await trx('entitlements').where({ id }).delete();
  }
}
