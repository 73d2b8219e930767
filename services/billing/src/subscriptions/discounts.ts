import type { DiscountRef } from '@billstream/contracts';
import type { Trx } from '@billstream/db';
import type { EventContext } from '@billstream/outbox';
import type { Subscription } from './domain';

/** A coupon to attach, by its id or its code. */
export type CouponRef = { id: string } | { code: string };

/** The wire's reference (exactly one of `coupon_id` and `code`, checked at the edge) as the services take it. */
export function couponRefOf(ref: DiscountRef): CouponRef {
  return ref.coupon_id !== undefined ? { id: ref.coupon_id } : { code: ref.code! };
}

/**
 * What the subscription service needs of coupons (docs/api/coupons.md, ADR 0040): coupons/
 * implements it (`CouponService`), above subscriptions/, which names no coupon. It runs inside
 * the creation's transaction, before the subscription's invoices are written, so they (its
 * first period, backdated or not) carry the discounts; a refused coupon rolls it all back.
 */
export interface SubscriptionDiscounts {
  attachAll(trx: Trx, ctx: EventContext, subscription: Subscription, refs: CouponRef[], now: Date): Promise<void>;
}
