import type { CouponDuration, CouponStatus, CouponType, DiscountStatus } from '@billstream/contracts';

/** A percent as written or as Postgres gives a numeric back, without trailing zeros ("12.5000" is "12.5"). */
export function plainPercent(v: string): string {
  return v.includes('.') ? v.replace(/0+$/, '').replace(/\.$/, '') : v;
}

/** A coupon (docs/api/coupons.md, ADR 0040): its terms never change once made. */
export interface Coupon {
  id: string;
  tenantId: string;
  environmentId: string;
  name: string;
  code: string | null;
  type: CouponType;
  /** PERCENTAGE: a decimal string in (0, 100]. */
  percentOff: string | null;
  /** FIXED_AMOUNT: minor units of `currency` per covered period. */
  amountOff: number | null;
  currency: string | null;
  duration: CouponDuration;
  durationInPeriods: number | null;
  appliesToPriceIds: string[] | null;
  maxRedemptions: number | null;
  redeemBy: Date | null;
  timesRedeemed: number;
  metadata: Record<string, string>;
  status: CouponStatus;
  archivedAt: Date | null;
  version: number;
  createdAt: Date;
  updatedAt: Date;
}

/** A coupon as the service takes it to make one (the route maps the wire body to it, ADR 0063). */
export type NewCoupon = Pick<
  Coupon,
  'name' | 'code' | 'type' | 'percentOff' | 'amountOff' | 'currency' | 'duration' | 'durationInPeriods' | 'appliesToPriceIds' | 'maxRedemptions' | 'redeemBy' | 'metadata'
>;

export interface CouponListQuery {
  status?: CouponStatus;
  code?: string;
  limit: number;
  offset: number;
}

/** A coupon attached to a subscription; `position` is its attach order. */
export interface Discount {
  id: string;
  tenantId: string;
  environmentId: string;
  subscriptionId: string;
  couponId: string;
  position: number;
  removedAt: Date | null;
  createdAt: Date;
}

/** A discount with its coupon and the billed periods (their starts, ms) whose invoices carry it. */
export interface DiscountState {
  discount: Discount;
  coupon: Coupon;
  coveredPeriods: Set<number>;
}

/** The billed periods a coupon covers: ONCE 1, REPEATING its count, FOREVER no limit (null). */
export function periodsOf(c: Pick<Coupon, 'duration' | 'durationInPeriods'>): number | null {
  if (c.duration === 'ONCE') return 1;
  if (c.duration === 'REPEATING') return c.durationInPeriods!;
  return null;
}

/** Periods left (null: FOREVER) and the status the API shows. */
export function discountProgress(s: DiscountState): { periodsRemaining: number | null; status: DiscountStatus } {
  const total = periodsOf(s.coupon);
  const periodsRemaining = total === null ? null : Math.max(0, total - s.coveredPeriods.size);
  if (s.discount.removedAt) return { periodsRemaining, status: 'removed' };
  return { periodsRemaining, status: periodsRemaining === 0 ? 'ended' : 'active' };
}
