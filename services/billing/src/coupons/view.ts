import type { couponSchema, discountSchema } from '@billstream/contracts';
import type { z } from 'zod';
import type { Coupon } from './domain';
import type { DiscountView } from './service';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function toCouponView(c: Coupon): z.output<typeof couponSchema> {
  return {
    id: c.id,
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
    redeem_by: iso(c.redeemBy),
    times_redeemed: c.timesRedeemed,
    metadata: c.metadata,
    status: c.status,
    archived_at: iso(c.archivedAt),
    created_at: c.createdAt.toISOString(),
    updated_at: c.updatedAt.toISOString(),
    tenant_id: c.tenantId,
    environment_id: c.environmentId,
  };
}

export function toDiscountView(d: DiscountView): z.output<typeof discountSchema> {
  return {
    id: d.discount.id,
    subscription_id: d.discount.subscriptionId,
    coupon_id: d.discount.couponId,
    periods_remaining: d.periodsRemaining,
    status: d.status,
    removed_at: iso(d.discount.removedAt),
    created_at: d.discount.createdAt.toISOString(),
  };
}
