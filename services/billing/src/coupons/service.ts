import type { Scope } from '@billstream/contracts';
import type { Db, Trx } from '@billstream/db';
import { AlreadyExistsError, NotFoundError, PG_UNIQUE_VIOLATION, pgErrorCode, ValidationError } from '@billstream/errors';
import { assertIfMatch } from '@billstream/http';
import { newId } from '@billstream/ids';
import type { EventContext } from '@billstream/outbox';
import type { PriceStore } from '../prices/store';
import { SUBSCRIPTION_EVENTS, type Subscription } from '../subscriptions/domain';
import type { CouponRef, SubscriptionDiscounts } from '../subscriptions/discounts';
import { announce, subscriptionNotFound } from '../subscriptions/events';
import type { SubscriptionStore } from '../subscriptions/store';
import type { InvoiceDiscounts } from './discounts';
import { discountProgress, plainPercent, type Coupon, type CouponListQuery, type DiscountState, type NewCoupon } from './domain';
import type { CouponStore } from './store';

export function couponNotFound(id: string, field = 'id'): NotFoundError {
  return new NotFoundError(`Coupon ${id} not found`, { field, coupon_id: id });
}

function refused(c: Coupon, why: string): ValidationError {
  return new ValidationError(`Coupon ${c.id} ${why}`, { field: 'coupon_id', coupon_id: c.id });
}

/** A discount as the API shows it: its periods left and status, counted from the invoices that carry it. */
export type DiscountView = DiscountState & ReturnType<typeof discountProgress>;

export interface CouponServiceDeps {
  db: Db;
  coupons: CouponStore;
  prices: PriceStore;
  subscriptions: SubscriptionStore;
  invoiceDiscounts: InvoiceDiscounts;
  clock: () => Date;
  published: () => void;
}

/** The coupon API and a subscription's discounts (docs/api/coupons.md, ADR 0040). */
export class CouponService implements SubscriptionDiscounts {
  constructor(private readonly deps: CouponServiceDeps) {}

  async create(scope: Scope, input: NewCoupon): Promise<Coupon> {
    const now = this.deps.clock();
    const coupon: Coupon = {
      id: newId('coupon'),
      tenantId: scope.tenantId,
      environmentId: scope.environmentId,
      ...input,
      percentOff: input.percentOff === null ? null : plainPercent(input.percentOff),
      timesRedeemed: 0,
      status: 'active',
      archivedAt: null,
      version: 1,
      createdAt: now,
      updatedAt: now,
    };
    if (coupon.appliesToPriceIds) {
      const found = new Set((await this.deps.prices.getMany(this.deps.db, scope, coupon.appliesToPriceIds)).map((p) => p.id));
      const missing = coupon.appliesToPriceIds.find((id) => !found.has(id));
      if (missing) throw new NotFoundError(`Price ${missing} not found`, { field: 'applies_to_price_ids', price_id: missing });
    }
    const inserted = await this.deps.db.transaction((trx) => this.deps.coupons.insert(trx, coupon));
    if (!inserted) throw new AlreadyExistsError(`A coupon with code ${coupon.code} already exists`, { field: 'code', code: coupon.code });
    return coupon;
  }

  async get(scope: Scope, id: string): Promise<Coupon> {
    const c = await this.deps.coupons.get(this.deps.db, scope, id);
    if (!c) throw couponNotFound(id);
    return c;
  }

  list(scope: Scope, q: CouponListQuery) {
    return this.deps.coupons.list(this.deps.db, scope, q);
  }

  /** `ifMatch` (the If-Match header) must name the current ETag, or be `*` or absent; else version_conflict and nothing changes. */
  async update(scope: Scope, id: string, changes: { name?: string; metadata?: Record<string, string> }, ifMatch?: string): Promise<Coupon> {
    await this.deps.db.transaction(async (trx) => {
      const current = await this.deps.coupons.lock(trx, scope, { id });
      if (!current) throw couponNotFound(id);
      assertIfMatch(ifMatch, current.version, `Coupon ${id}`);
      await this.deps.coupons.update(trx, scope, id, changes, this.deps.clock());
    });
    return this.get(scope, id);
  }

  /** Archives the coupon: no subscription takes it from now on; discounts made of it go on. */
  async archive(scope: Scope, id: string): Promise<void> {
    if (!(await this.deps.coupons.archive(this.deps.db, scope, id, this.deps.clock()))) throw couponNotFound(id);
  }

  /** POST /v1/subscriptions/{id}/discounts: attaches one coupon, under the subscription's row lock; `subscription.updated`. */
  async attach(ctx: EventContext, subscriptionId: string, ref: CouponRef): Promise<DiscountView> {
    const now = this.deps.clock();
    const discountId = await this.deps.db.transaction(async (trx) => {
      const s = await this.deps.subscriptions.getForUpdate(trx, ctx, subscriptionId);
      if (!s) throw subscriptionNotFound(subscriptionId);
      const id = await this.attachOne(trx, s, ref, now);
      await announce(trx, ctx, SUBSCRIPTION_EVENTS.updated, s);
      return id;
    });
    this.deps.published();
    return (await this.discountsOf(ctx, subscriptionId)).find((d) => d.discount.id === discountId)!;
  }

  /** The creation's discounts, in order (the port of subscriptions/). */
  async attachAll(trx: Trx, _ctx: EventContext, subscription: Subscription, refs: CouponRef[], now: Date): Promise<void> {
    for (const ref of refs) await this.attachOne(trx, subscription, ref, now);
  }

  async discountsOf(scope: Scope, subscriptionId: string): Promise<DiscountView[]> {
    const s = await this.deps.subscriptions.get(this.deps.db, scope, subscriptionId);
    if (!s) throw subscriptionNotFound(subscriptionId);
    return (await this.deps.invoiceDiscounts.statesOf(this.deps.db, s.id)).map((state) => ({ ...state, ...discountProgress(state) }));
  }

  /** DELETE .../discounts/{id}: invoices made from now on leave it out; those made keep it. */
  async remove(ctx: EventContext, subscriptionId: string, discountId: string): Promise<void> {
    await this.deps.db.transaction(async (trx) => {
      const s = await this.deps.subscriptions.getForUpdate(trx, ctx, subscriptionId);
      if (!s) throw subscriptionNotFound(subscriptionId);
      const found = (await this.deps.coupons.discountsOf(trx, s.id)).find((d) => d.discount.id === discountId);
      if (!found) throw new NotFoundError(`Discount ${discountId} not found`, { field: 'discount_id', discount_id: discountId });
      if (found.discount.removedAt) return;
      await this.deps.coupons.markRemoved(trx, discountId, this.deps.clock());
      await announce(trx, ctx, SUBSCRIPTION_EVENTS.updated, s);
    });
    this.deps.published();
  }

  /**
   * One coupon attached, its redemption counted under the coupon's row lock (max_redemptions
   * exact under concurrency). The caller holds the subscription's row (or just made it).
   */
  private async attachOne(trx: Trx, s: Subscription, ref: CouponRef, now: Date): Promise<string> {
    const c = await this.deps.coupons.lock(trx, s, ref);
    if (!c) throw 'id' in ref ? couponNotFound(ref.id, 'coupon_id') : couponNotFound(ref.code, 'code');
    if (s.status === 'cancelled') throw new ValidationError(`Subscription ${s.id} is cancelled: it takes no discount`, { field: 'coupon_id', subscription_id: s.id });
    if (c.status === 'archived') throw refused(c, 'is archived');
    if (c.redeemBy && c.redeemBy.getTime() < now.getTime()) throw refused(c, `could be redeemed until ${c.redeemBy.toISOString()}`);
    if (c.maxRedemptions !== null && c.timesRedeemed >= c.maxRedemptions) throw refused(c, `was redeemed ${c.timesRedeemed} times, its max_redemptions`);
    if (c.currency !== null && c.currency.toLowerCase() !== s.currency.toLowerCase()) {
      throw refused(c, `is in ${c.currency}; subscription ${s.id} bills in ${s.currency}`);
    }
    const attached = (await this.deps.coupons.discountsOf(trx, s.id)).some((d) => d.coupon.id === c.id);
    if (attached) throw new AlreadyExistsError(`Coupon ${c.id} is already attached to subscription ${s.id}`, { field: 'coupon_id', coupon_id: c.id });
    try {
      const d = await this.deps.coupons.insertDiscount(trx, { id: newId('discount'), tenantId: s.tenantId, environmentId: s.environmentId, subscriptionId: s.id, couponId: c.id, removedAt: null, createdAt: now });
      await this.deps.coupons.redeemed(trx, c.id, now);
      return d.id;
    } catch (error) {
      if (pgErrorCode(error) === PG_UNIQUE_VIOLATION) throw new AlreadyExistsError(`Coupon ${c.id} is already attached to subscription ${s.id}`, { field: 'coupon_id', coupon_id: c.id });
      throw error;
    }
  }
}
