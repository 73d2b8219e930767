import type { Scope } from '@billstream/contracts';
import { pageOf, type Conn, type Trx } from '@billstream/db';
import { plainPercent, type Coupon, type CouponListQuery, type Discount } from './domain';

interface CouponRow {
  id: string;
  tenant_id: string;
  environment_id: string;
  name: string;
  code: string | null;
  type: Coupon['type'];
  percent_off: string | null;
  amount_off: string | number | null;
  currency: string | null;
  duration: Coupon['duration'];
  duration_in_periods: number | null;
  applies_to_price_ids: string[] | null;
  max_redemptions: number | null;
  redeem_by: Date | null;
  times_redeemed: number;
  metadata: Record<string, string>;
  status: Coupon['status'];
  archived_at: Date | null;
  version: number;
  created_at: Date;
  updated_at: Date;
}

interface DiscountRow {
  id: string;
  tenant_id: string;
  environment_id: string;
  subscription_id: string;
  coupon_id: string;
  position: number;
  removed_at: Date | null;
  created_at: Date;
}

function fromRow(r: CouponRow): Coupon {
  return {
    id: r.id,
    tenantId: r.tenant_id,
    environmentId: r.environment_id,
    name: r.name,
    code: r.code,
    type: r.type,
    percentOff: r.percent_off === null ? null : plainPercent(r.percent_off),
    amountOff: r.amount_off === null ? null : Number(r.amount_off),
    currency: r.currency,
    duration: r.duration,
    durationInPeriods: r.duration_in_periods,
    appliesToPriceIds: r.applies_to_price_ids,
    maxRedemptions: r.max_redemptions,
    redeemBy: r.redeem_by,
    timesRedeemed: r.times_redeemed,
    metadata: r.metadata,
    status: r.status,
    archivedAt: r.archived_at,
    version: r.version,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

function discountFromRow(r: DiscountRow): Discount {
  return {
    id: r.id,
    tenantId: r.tenant_id,
    environmentId: r.environment_id,
    subscriptionId: r.subscription_id,
    couponId: r.coupon_id,
    position: r.position,
    removedAt: r.removed_at,
    createdAt: r.created_at,
  };
}

const scoped = (conn: Conn, scope: Scope) => conn<CouponRow>('coupons').where({ tenant_id: scope.tenantId, environment_id: scope.environmentId });

/** Coupons, the discounts attaching them to subscriptions, and what invoices took of them. */
export class CouponStore {
  /** Answers false when the code is taken in the environment (nothing written). */
  async insert(trx: Trx, c: Coupon): Promise<boolean> {
    const rows = await trx('coupons')
      .insert({
        id: c.id,
        tenant_id: c.tenantId,
        environment_id: c.environmentId,
        name: c.name,
        code: c.code,
        type: c.type,
        percent_off: c.percentOff,
        amount_off: c.amountOff,
        currency: c.currency,
        duration: c.duration,
        duration_in_periods: c.durationInPeriods,
        applies_to_price_ids: c.appliesToPriceIds,
        max_redemptions: c.maxRedemptions,
        redeem_by: c.redeemBy,
        times_redeemed: 0,
        metadata: c.metadata,
        status: c.status,
        archived_at: null,
        version: 1,
        created_at: c.createdAt,
        updated_at: c.updatedAt,
      })
      .onConflict(trx.raw('(tenant_id, environment_id, code) WHERE code IS NOT NULL'))
      .ignore()
      .returning('id');
    return rows.length === 1;
  }

  async get(conn: Conn, scope: Scope, id: string): Promise<Coupon | undefined> {
    const row = await scoped(conn, scope).andWhere({ id }).first();
    return row && fromRow(row);
  }

  /** The coupon of an id or a code, row-locked (attach counts its redemptions under this lock). */
  async lock(trx: Trx, scope: Scope, by: { id: string } | { code: string }): Promise<Coupon | undefined> {
    const row = await scoped(trx, scope).andWhere(by).forUpdate().first();
    return row && fromRow(row);
  }

  list(conn: Conn, scope: Scope, q: CouponListQuery) {
    const filtered = () => {
      const query = scoped(conn, scope);
      if (q.status) query.andWhere({ status: q.status });
      if (q.code) query.andWhere({ code: q.code });
      return query;
    };
    return pageOf(filtered, q, fromRow);
  }

  async update(trx: Trx, scope: Scope, id: string, changes: { name?: string; metadata?: Record<string, string> }, now: Date): Promise<void> {
    await scoped(trx, scope)
      .andWhere({ id })
      .update({ ...changes, version: trx.raw('version + 1'), updated_at: now });
  }

  /** Archives the coupon (once); answers false when it does not exist. */
  async archive(conn: Conn, scope: Scope, id: string, now: Date): Promise<boolean> {
    const found = await scoped(conn, scope).andWhere({ id }).first('status');
    if (!found) return false;
    await scoped(conn, scope)
      .andWhere({ id, status: 'active' })
      .update({ status: 'archived', archived_at: now, updated_at: now, version: conn.raw('version + 1') });
    return true;
  }

  async redeemed(trx: Trx, id: string, now: Date): Promise<void> {
    await trx('coupons')
      .where({ id })
      .update({ times_redeemed: trx.raw('times_redeemed + 1'), updated_at: now });
  }

  async insertDiscount(trx: Trx, d: Omit<Discount, 'position'>): Promise<Discount> {
    const [row] = await trx('subscription_discounts')
      .insert({
        id: d.id,
        tenant_id: d.tenantId,
        environment_id: d.environmentId,
        subscription_id: d.subscriptionId,
        coupon_id: d.couponId,
        position: trx.raw('(SELECT coalesce(max(position), -1) + 1 FROM subscription_discounts WHERE subscription_id = ?)', [d.subscriptionId]),
        removed_at: null,
        created_at: d.createdAt,
      })
      .returning('*');
    return discountFromRow(row as DiscountRow);
  }

  /** A subscription's discounts in attach order, each with its coupon. */
  discountsOf(conn: Conn, subscriptionId: string): Promise<Array<{ discount: Discount; coupon: Coupon }>> {
    return this.discountsOfMany(conn, [subscriptionId]);
  }

  /** The discounts of many subscriptions (one query, then one for their coupons), by subscription and attach order. */
  async discountsOfMany(conn: Conn, subscriptionIds: string[]): Promise<Array<{ discount: Discount; coupon: Coupon }>> {
    if (subscriptionIds.length === 0) return [];
    const discounts = (
      await conn<DiscountRow>('subscription_discounts')
        .whereIn('subscription_id', subscriptionIds)
        .orderBy([{ column: 'subscription_id' }, { column: 'position' }])
    ).map(discountFromRow);
    if (discounts.length === 0) return [];
    const coupons = new Map(
      (await conn<CouponRow>('coupons').whereIn('id', [...new Set(discounts.map((d) => d.couponId))])).map((r) => [r.id, fromRow(r)] as const),
    );
    return discounts.map((discount) => ({ discount, coupon: coupons.get(discount.couponId)! }));
  }

  /**
   * The subscriptions' price overrides of `priceIds` (docs/api/billing.md#price-overrides, ADR 0042): each
   * as its subscription, the plan's price it replaces and its own id, in one query.
   */
  async overridesOf(conn: Conn, subscriptionIds: string[], priceIds: string[]): Promise<Array<{ subscriptionId: string; parentPriceId: string; id: string }>> {
    if (subscriptionIds.length === 0 || priceIds.length === 0) return [];
    const rows = await conn<{ id: string; subscription_id: string; parent_price_id: string }>('prices')
      .whereIn('subscription_id', [...new Set(subscriptionIds)])
      .whereIn('parent_price_id', [...new Set(priceIds)])
      .select('id', 'subscription_id', 'parent_price_id');
    return rows.map((r) => ({ subscriptionId: r.subscription_id, parentPriceId: r.parent_price_id, id: r.id }));
  }

  async markRemoved(trx: Trx, id: string, now: Date): Promise<void> {
    await trx('subscription_discounts').where({ id }).whereNull('removed_at').update({ removed_at: now });
  }

  /** What invoices (not voided) took of discounts: one row per (invoice, discount), with the billed periods it covered there (and, FIXED_AMOUNT, what each took). */
  async uses(conn: Conn, discountIds: string[]): Promise<Array<{ invoiceId: string; discountId: string; periods: Date[]; amount: number; periodAmounts?: number[] | null }>> {
    if (discountIds.length === 0) return [];
    const rows = await conn('invoice_discounts as d')
      .join('invoices as i', 'i.id', 'd.invoice_id')
      .whereIn('d.discount_id', discountIds)
      .whereNot('i.status', 'voided')
      .select<
        Array<{ invoice_id: string; discount_id: string; periods: Date[]; amount: string | number; period_amounts: Array<string | number> | null }>
      >('d.invoice_id', 'd.discount_id', 'd.periods', 'd.amount', 'd.period_amounts');
    return rows.map((r) => ({
      invoiceId: r.invoice_id,
      discountId: r.discount_id,
      periods: r.periods,
      amount: Number(r.amount),
      periodAmounts: r.period_amounts ? r.period_amounts.map(Number) : null,
    }));
  }
}
