import type { Express } from 'express';
import { couponApi, pageOf, type CreateCouponBody } from '@billstream/contracts';
import { etagOf, HttpResult, mountRoute } from '@billstream/http';
import type { Logger } from '@billstream/logger';
import { couponRefOf } from '../subscriptions/discounts';
import type { Coupon, NewCoupon } from './domain';
import type { CouponService } from './service';
import { toCouponView, toDiscountView } from './view';

/** The coupon's view with its ETag (`"<version>"`), for If-Match on a later PUT. */
const withEtag = (c: Coupon) => new HttpResult(toCouponView(c), undefined, { ETag: etagOf(c.version) });

function newCouponOf(b: CreateCouponBody): NewCoupon {
  return {
    name: b.name,
    code: b.code ?? null,
    type: b.type,
    percentOff: b.percent_off ?? null,
    amountOff: b.amount_off ?? null,
    currency: b.currency ?? null,
    duration: b.duration,
    durationInPeriods: b.duration_in_periods ?? null,
    appliesToPriceIds: b.applies_to_price_ids ?? null,
    maxRedemptions: b.max_redemptions ?? null,
    redeemBy: b.redeem_by ? new Date(b.redeem_by) : null,
    metadata: b.metadata ?? {},
  };
}

export function mountCouponRoutes(app: Express, coupons: CouponService, logger: Logger): void {
  mountRoute(app, couponApi.createCoupon, async ({ body, ctx }) => withEtag(await coupons.create(ctx, newCouponOf(body))), logger);
  mountRoute(
    app,
    couponApi.listCoupons,
    async ({ query, ctx }) => {
      const page = await coupons.list(ctx, { status: query.status, code: query.code, limit: query.limit, offset: query.offset });
      return { items: page.items.map(toCouponView), pagination: { total: page.total, limit: query.limit, offset: query.offset } };
    },
    logger,
  );
  mountRoute(app, couponApi.getCoupon, async ({ params, ctx }) => withEtag(await coupons.get(ctx, params.id)), logger);
  mountRoute(
    app,
    couponApi.updateCoupon,
    async ({ params, body, ctx, req }) => withEtag(await coupons.update(ctx, params.id, { name: body.name, metadata: body.metadata }, req.header('if-match'))),
    logger,
  );
  mountRoute(app, couponApi.archiveCoupon, async ({ params, ctx }) => coupons.archive(ctx, params.id), logger);
  mountRoute(app, couponApi.attachDiscount, async ({ params, body, ctx }) => toDiscountView(await coupons.attach(ctx, params.id, couponRefOf(body))), logger);
  mountRoute(app, couponApi.listDiscounts, async ({ params, query, ctx }) => pageOf((await coupons.discountsOf(ctx, params.id)).map(toDiscountView), query), logger);
  mountRoute(app, couponApi.removeDiscount, async ({ params, ctx }) => coupons.remove(ctx, params.id, params.discount_id), logger);
}
