import type { Scope } from '@billstream/contracts';
import type { Conn } from '@billstream/db';
import type { Price } from './domain';

interface PriceRow {
  id: string;
  tenant_id: string;
  environment_id: string;
  plan_id: string;
  type: Price['type'];
  currency: string;
  amount: string | null;
  billing_model: Price['billingModel'];
  billing_period: Price['billingPeriod'];
  billing_period_count: number;
  invoice_cadence: Price['invoiceCadence'];
  meter_id: string | null;
  filter_values: Record<string, string[]> | null;
  package: Price['package'];
  tier_mode: Price['tierMode'];
  tiers: Array<{ up_to: string | null; unit_amount: string; flat_amount: string | null }> | null;
  display_name: string | null;
  tax_rate_ids: string[] | string;
  tax_behavior: Price['taxBehavior'];
  parent_price_id: string | null;
  subscription_id: string | null;
  status: Price['status'];
  created_at: Date;
  updated_at: Date;
}

function fromRow(r: PriceRow): Price {
  return {
    id: r.id,
    tenantId: r.tenant_id,
    environmentId: r.environment_id,
    planId: r.plan_id,
    type: r.type,
    currency: r.currency,
    amount: r.amount,
    billingModel: r.billing_model,
    billingPeriod: r.billing_period,
    billingPeriodCount: r.billing_period_count,
    invoiceCadence: r.invoice_cadence,
    meterId: r.meter_id,
    filterValues: r.filter_values,
    package: r.package,
    tierMode: r.tier_mode,
    tiers: r.tiers && r.tiers.map((t) => ({ upTo: t.up_to, unitAmount: t.unit_amount, flatAmount: t.flat_amount })),
    displayName: r.display_name,
    taxRateIds: (typeof r.tax_rate_ids === 'string' ? JSON.parse(r.tax_rate_ids) : r.tax_rate_ids) ?? [],
    taxBehavior: r.tax_behavior ?? null,
    parentPriceId: r.parent_price_id,
    subscriptionId: r.subscription_id,
    status: r.status,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

function toRow(p: Price): PriceRow {
  return {
    id: p.id,
    tenant_id: p.tenantId,
    environment_id: p.environmentId,
    plan_id: p.planId,
    type: p.type,
    currency: p.currency,
    amount: p.amount,
    billing_model: p.billingModel,
    billing_period: p.billingPeriod,
    billing_period_count: p.billingPeriodCount,
    invoice_cadence: p.invoiceCadence,
    meter_id: p.meterId,
    filter_values: p.filterValues,
    package: p.package,
    tier_mode: p.tierMode,
    tiers: p.tiers && p.tiers.map((t) => ({ up_to: t.upTo, unit_amount: t.unitAmount, flat_amount: t.flatAmount })),
    display_name: p.displayName,
    tax_rate_ids: p.taxRateIds,
    tax_behavior: p.taxBehavior,
    parent_price_id: p.parentPriceId,
    subscription_id: p.subscriptionId,
    status: p.status,
    created_at: p.createdAt,
    updated_at: p.updatedAt,
  };
}

const scoped = (conn: Conn, scope: Scope) =>
  conn<PriceRow>('prices').where({ tenant_id: scope.tenantId, environment_id: scope.environmentId });

/** Prices: inserted, read and archived; the table refuses any other change. */
export class PriceStore {
  async insert(conn: Conn, prices: Price[]): Promise<void> {
    if (prices.length === 0) return;
    const rows = prices.map(toRow).map((r) => ({
      ...r,
      filter_values: r.filter_values && JSON.stringify(r.filter_values),
      package: r.package && JSON.stringify(r.package),
      tiers: r.tiers && JSON.stringify(r.tiers),
      tax_rate_ids: JSON.stringify(r.tax_rate_ids),
    }));
    await conn('prices').insert(rows);
  }

  async get(conn: Conn, scope: Scope, id: string): Promise<Price | undefined> {
    const row = await scoped(conn, scope).where({ id }).first();
    return row && fromRow(row);
  }

  async getMany(conn: Conn, scope: Scope, ids: string[]): Promise<Price[]> {
    if (ids.length === 0) return [];
    const rows = await scoped(conn, scope).whereIn('id', ids).orderBy([{ column: 'created_at' }, { column: 'id' }]);
    return rows.map(fromRow);
  }

  /** The prices a subscription bills, oldest first, in one query (the period job reads them for every subscription it bills). */
  async ofSubscription(conn: Conn, scope: Scope, subscriptionId: string): Promise<Price[]> {
    const rows = await scoped(conn, scope)
      .whereIn('id', conn('subscription_prices').select('price_id').where({ subscription_id: subscriptionId }))
      .orderBy([{ column: 'created_at' }, { column: 'id' }]);
    return rows.map(fromRow);
  }

  /**
   * The prices of many subscriptions (any tenant: the period job's batch), oldest first, keyed by
   * subscription id, in one query; only prices of the subscription's own tenant and environment.
   */
  async ofSubscriptions(conn: Conn, subscriptions: Array<{ id: string; tenantId: string; environmentId: string }>): Promise<Map<string, Price[]>> {
    const out = new Map<string, Price[]>(subscriptions.map((s) => [s.id, []]));
    if (subscriptions.length === 0) return out;
    const scopeOf = new Map(subscriptions.map((s) => [s.id, s]));
    const rows = await conn('prices AS p')
      .join('subscription_prices AS sp', 'sp.price_id', 'p.id')
      .whereIn(
        'sp.subscription_id',
        subscriptions.map((s) => s.id),
      )
      .orderBy([{ column: 'p.created_at' }, { column: 'p.id' }])
      .select('p.*', 'sp.subscription_id AS for_subscription');
    for (const row of rows as Array<{ for_subscription: string; tenant_id: string; environment_id: string }>) {
      const s = scopeOf.get(row.for_subscription);
      if (!s || s.tenantId !== row.tenant_id || s.environmentId !== row.environment_id) continue;
      out.get(s.id)!.push(fromRow(row as never));
    }
    return out;
  }

  /** The prices of plans, oldest first, keyed by plan id: their own, not the subscriptions' overrides. */
  async ofPlans(conn: Conn, scope: Scope, planIds: string[]): Promise<Map<string, Price[]>> {
    const out = new Map<string, Price[]>(planIds.map((id) => [id, []]));
    if (planIds.length === 0) return out;
    const rows = await scoped(conn, scope).whereIn('plan_id', planIds).whereNull('subscription_id').orderBy([{ column: 'created_at' }, { column: 'id' }]);
    for (const row of rows) out.get(row.plan_id)?.push(fromRow(row));
    return out;
  }

  async archive(conn: Conn, scope: Scope, id: string, at: Date): Promise<Price | undefined> {
    const rows = await scoped(conn, scope).where({ id }).update({ status: 'archived', updated_at: at }).returning('*');
    return rows[0] && fromRow(rows[0] as PriceRow);
  }
}
