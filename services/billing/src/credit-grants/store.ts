import type { Scope } from '@billstream/contracts';
import { pageOf, type Conn, type Db, type Trx } from '@billstream/db';
import { exact, toDecimalString } from '@billstream/money';
import type { BillingPeriod } from '../periods';
import type { Binding, CreditGrant, CreditGrantListQuery } from './domain';

interface GrantRow {
  id: string;
  tenant_id: string;
  environment_id: string;
  plan_id: string | null;
  subscription_id: string | null;
  name: string;
  credits: string;
  cadence: CreditGrant['cadence'];
  period: BillingPeriod | null;
  expire_in_days: number | null;
  priority: number | null;
  conversion_rate: string | null;
  metadata: Record<string, string>;
  status: CreditGrant['status'];
  archived_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

interface BindingRow {
  subscription_id: string;
  grant_id: string;
  tenant_id: string;
  environment_id: string;
  starts_from: Date | null;
  applied_through: Date | null;
  next_due: Date | null;
  claimed_until: Date | null;
  created_at: Date;
}

function fromRow(r: GrantRow): CreditGrant {
  return {
    id: r.id,
    tenantId: r.tenant_id,
    environmentId: r.environment_id,
    planId: r.plan_id,
    subscriptionId: r.subscription_id,
    name: r.name,
    credits: exact(r.credits),
    cadence: r.cadence,
    period: r.period,
    expireInDays: r.expire_in_days,
    priority: r.priority,
    conversionRate: r.conversion_rate === null ? null : exact(r.conversion_rate),
    metadata: r.metadata,
    status: r.status,
    archivedAt: r.archived_at,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

function bindingFromRow(r: BindingRow): Binding {
  return { subscriptionId: r.subscription_id, grantId: r.grant_id, startsFrom: r.starts_from, appliedThrough: r.applied_through, nextDue: r.next_due };
}

const scoped = (conn: Conn, scope: Scope) => conn<GrantRow>('credit_grants').where({ tenant_id: scope.tenantId, environment_id: scope.environmentId });

/** Credit grants and the bindings of subscriptions to them. */
export class CreditGrantStore {
  async insert(conn: Conn, g: CreditGrant): Promise<void> {
    await conn('credit_grants').insert({
      id: g.id,
      tenant_id: g.tenantId,
      environment_id: g.environmentId,
      plan_id: g.planId,
      subscription_id: g.subscriptionId,
      name: g.name,
      credits: toDecimalString(g.credits),
      cadence: g.cadence,
      period: g.period,
      expire_in_days: g.expireInDays,
      priority: g.priority,
      conversion_rate: g.conversionRate && toDecimalString(g.conversionRate),
      metadata: JSON.stringify(g.metadata),
      status: g.status,
      archived_at: g.archivedAt,
      created_at: g.createdAt,
      updated_at: g.updatedAt,
    });
  }

  async get(conn: Conn, scope: Scope, id: string): Promise<CreditGrant | undefined> {
    const row = await scoped(conn, scope).where({ id }).first();
    return row && fromRow(row);
  }

  async getForUpdate(trx: Trx, scope: Scope, id: string): Promise<CreditGrant | undefined> {
    const row = await scoped(trx, scope).where({ id }).forUpdate().first();
    return row && fromRow(row);
  }

  async getByIds(conn: Conn, ids: string[]): Promise<Map<string, CreditGrant>> {
    if (ids.length === 0) return new Map();
    const rows = await conn<GrantRow>('credit_grants').whereIn('id', ids);
    return new Map(rows.map((r) => [r.id, fromRow(r as GrantRow)]));
  }

  /** A plan's active grants, share-locked: an archive waits for the subscription that binds them (and is seen by the next one). */
  async activeOfPlanForShare(trx: Trx, scope: Scope, planId: string): Promise<CreditGrant[]> {
    const rows = await scoped(trx, scope).where({ plan_id: planId, status: 'active' }).orderBy('id').forShare();
    return rows.map((r) => fromRow(r as GrantRow));
  }

  async list(conn: Conn, scope: Scope, q: CreditGrantListQuery): Promise<{ items: CreditGrant[]; total: number }> {
    const filtered = () => {
      const b = scoped(conn, scope);
      if (q.planId) b.where({ plan_id: q.planId });
      if (q.subscriptionId) b.where({ subscription_id: q.subscriptionId });
      if (q.status) b.where({ status: q.status });
      return b;
    };
    return pageOf(filtered, q, fromRow);
  }

  async archive(trx: Trx, id: string, at: Date): Promise<void> {
    await trx('credit_grants').where({ id, status: 'active' }).update({ status: 'archived', archived_at: at, updated_at: at });
  }

  async insertBindings(trx: Trx, scope: Scope, subscriptionId: string, grants: Array<{ grantId: string; startsFrom: Date | null }>, now: Date): Promise<void> {
    if (grants.length === 0) return;
    await trx('credit_grant_bindings')
      .insert(
        grants.map((g) => ({
          subscription_id: subscriptionId,
          grant_id: g.grantId,
          tenant_id: scope.tenantId,
          environment_id: scope.environmentId,
          starts_from: g.startsFrom,
          created_at: now,
        })),
      )
      .onConflict(['subscription_id', 'grant_id'])
      .ignore();
  }

  /** Unbinds the grants of `planId` from the subscription (a change away from the plan); what they gave stays. */
  async unbindPlan(trx: Trx, subscriptionId: string, planId: string): Promise<void> {
    await trx('credit_grant_bindings')
      .where({ subscription_id: subscriptionId })
      .whereIn('grant_id', trx('credit_grants').select('id').where({ plan_id: planId }))
      .delete();
  }

  /** The subscription's bindings, locked (after the subscription's row: the order every writer takes). */
  async bindingsForUpdate(trx: Trx, subscriptionId: string): Promise<Binding[]> {
    const rows = await trx<BindingRow>('credit_grant_bindings').where({ subscription_id: subscriptionId }).orderBy('grant_id').forUpdate();
    return rows.map((r) => bindingFromRow(r as BindingRow));
  }

  /** `bindingsForUpdate` of several subscriptions (whose rows the caller locked) in one statement, in (subscription, grant) order. */
  async bindingsOfForUpdate(trx: Trx, subscriptionIds: string[]): Promise<Binding[]> {
    if (subscriptionIds.length === 0) return [];
    const rows = await trx<BindingRow>('credit_grant_bindings').whereIn('subscription_id', subscriptionIds).orderBy(['subscription_id', 'grant_id']).forUpdate();
    return rows.map((r) => bindingFromRow(r as BindingRow));
  }

  /** `saveCursor` of several bindings in one statement. */
  async saveCursors(trx: Trx, bindings: Binding[]): Promise<void> {
    if (bindings.length === 0) return;
    const values = bindings.map(() => '(?, ?, ?::timestamptz, ?::timestamptz)').join(', ');
    await trx.raw(
      `UPDATE credit_grant_bindings b SET applied_through = v.applied_through, next_due = v.next_due, claimed_until = NULL
         FROM (VALUES ${values}) AS v (subscription_id, grant_id, applied_through, next_due)
        WHERE b.subscription_id = v.subscription_id AND b.grant_id = v.grant_id`,
      bindings.flatMap((b) => [b.subscriptionId, b.grantId, b.appliedThrough, b.nextDue]),
    );
  }

  async saveCursor(trx: Trx, b: Binding): Promise<void> {
    await trx('credit_grant_bindings')
      .where({ subscription_id: b.subscriptionId, grant_id: b.grantId })
      .update({ applied_through: b.appliedThrough, next_due: b.nextDue, claimed_until: null });
  }

  /**
   * Claims the subscriptions of up to `limit` bindings whose next period is due by `now` for
   * `leaseMs` (SKIP LOCKED and the lease let replicas take different ones; a crash's claim
   * expires). With `scope`, that tenant's and environment's only.
   */
  async claimDue(db: Db, now: Date, leaseMs: number, limit: number, scope?: Scope): Promise<string[]> {
    const result = await db.raw<{ rows: Array<{ subscription_id: string }> }>(
      `UPDATE credit_grant_bindings SET claimed_until = ? WHERE (subscription_id, grant_id) IN (
         SELECT subscription_id, grant_id FROM credit_grant_bindings
          WHERE next_due <= ? AND (claimed_until IS NULL OR claimed_until <= ?)
            ${scope ? 'AND tenant_id = ? AND environment_id = ?' : ''}
          ORDER BY next_due, subscription_id, grant_id LIMIT ? FOR UPDATE SKIP LOCKED)
       RETURNING subscription_id`,
      [new Date(now.getTime() + leaseMs), now, now, ...(scope ? [scope.tenantId, scope.environmentId] : []), limit],
    );
    return [...new Set(result.rows.map((r) => r.subscription_id))];
  }

  /** `claimDue` of the bindings of `subscriptionIds` only (the period job, after it invoiced them): the subscriptions claimed. */
  async claimDueOf(db: Db, subscriptionIds: string[], now: Date, leaseMs: number): Promise<string[]> {
    if (subscriptionIds.length === 0) return [];
    const result = await db.raw<{ rows: Array<{ subscription_id: string }> }>(
      `UPDATE credit_grant_bindings SET claimed_until = ? WHERE (subscription_id, grant_id) IN (
         SELECT subscription_id, grant_id FROM credit_grant_bindings
          WHERE subscription_id = ANY(?::text[]) AND next_due <= ? AND (claimed_until IS NULL OR claimed_until <= ?)
          FOR UPDATE SKIP LOCKED)
       RETURNING subscription_id`,
      [new Date(now.getTime() + leaseMs), subscriptionIds, now, now],
    );
    return [...new Set(result.rows.map((r) => r.subscription_id))];
  }
}
