import { z } from 'zod';
import { isoTimestamp, listResponse, metadataSchema, paginationQuery } from '../common';
import { defineRoute, type RouteDef } from '../routes';
import { currencyCode } from './prices';

/** Coupons and discounts (docs/api/coupons.md, issue #31, ADR 0040). */
export const COUPON_TYPES = ['PERCENTAGE', 'FIXED_AMOUNT'] as const;
export const COUPON_DURATIONS = ['ONCE', 'REPEATING', 'FOREVER'] as const;
export const COUPON_STATUSES = ['active', 'archived'] as const;
export const DISCOUNT_STATUSES = ['active', 'ended', 'removed'] as const;
export type CouponType = (typeof COUPON_TYPES)[number];
export type CouponDuration = (typeof COUPON_DURATIONS)[number];
export type CouponStatus = (typeof COUPON_STATUSES)[number];
export type DiscountStatus = (typeof DISCOUNT_STATUSES)[number];

const id = z.string().min(1, 'must not be empty').max(255, 'must be at most 255 characters');
const idParams = z.strictObject({ id });
const MAX_MINOR = 999_999_999_999_999;

/** A percentage in (0, 100] with at most 4 decimals, written as a string ("12.5"). */
const percentOff = z
  .string()
  .regex(/^(0|[1-9]\d{0,2})(\.\d{1,4})?$/, 'must be a decimal number in (0, 100] with at most 4 decimals, written as a string, e.g. "12.5"')
  .refine((v) => /[1-9]/.test(v) && Number(v) <= 100, 'must be greater than 0 and at most 100');

/** A coupon code: letters, digits, `-` and `_`. */
const couponCode = z
  .string()
  .min(1, 'must not be empty')
  .max(64, 'must be at most 64 characters')
  .regex(/^[A-Za-z0-9_-]+$/, 'must hold only letters, digits, - and _');

export const createCouponBody = z
  .strictObject({
    name: z.string().min(1, 'must not be empty').max(255, 'must be at most 255 characters'),
    code: couponCode.optional(),
    type: z.enum(COUPON_TYPES, 'must be PERCENTAGE or FIXED_AMOUNT'),
    percent_off: percentOff.optional(),
    /** Minor units of `currency` taken off each covered period. */
    amount_off: z.number().int('must be a whole number of minor units').min(1, 'must be 1 or more').max(MAX_MINOR).optional(),
    currency: currencyCode.optional(),
    duration: z.enum(COUPON_DURATIONS, 'must be ONCE, REPEATING or FOREVER'),
    duration_in_periods: z.number().int('must be a whole number').min(1, 'must be between 1 and 1000').max(1000, 'must be between 1 and 1000').optional(),
    applies_to_price_ids: z.array(id).min(1, 'must name at least one price').max(100, 'must name at most 100 prices').optional(),
    max_redemptions: z.number().int('must be a whole number').min(1, 'must be 1 or more').max(2_147_483_647).optional(),
    redeem_by: isoTimestamp.optional(),
    metadata: metadataSchema.optional(),
  })
  .superRefine((v, ctx) => {
    if (v.type === 'PERCENTAGE') {
      if (v.percent_off === undefined) ctx.addIssue({ code: 'custom', path: ['percent_off'], message: 'is required for a PERCENTAGE coupon' });
      if (v.amount_off !== undefined) ctx.addIssue({ code: 'custom', path: ['amount_off'], message: 'applies to FIXED_AMOUNT coupons only' });
      if (v.currency !== undefined) ctx.addIssue({ code: 'custom', path: ['currency'], message: 'applies to FIXED_AMOUNT coupons only' });
    } else {
      if (v.amount_off === undefined) ctx.addIssue({ code: 'custom', path: ['amount_off'], message: 'is required for a FIXED_AMOUNT coupon' });
      if (v.currency === undefined) ctx.addIssue({ code: 'custom', path: ['currency'], message: 'is required for a FIXED_AMOUNT coupon' });
      if (v.percent_off !== undefined) ctx.addIssue({ code: 'custom', path: ['percent_off'], message: 'applies to PERCENTAGE coupons only' });
    }
    if (v.duration === 'REPEATING' && v.duration_in_periods === undefined) {
      ctx.addIssue({ code: 'custom', path: ['duration_in_periods'], message: 'is required for a REPEATING coupon' });
    }
    if (v.duration !== 'REPEATING' && v.duration_in_periods !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['duration_in_periods'], message: 'applies to REPEATING coupons only' });
    }
    if (v.applies_to_price_ids && new Set(v.applies_to_price_ids).size !== v.applies_to_price_ids.length) {
      ctx.addIssue({ code: 'custom', path: ['applies_to_price_ids'], message: 'must not name a price twice' });
    }
  })
  .meta({ examples: [{ name: 'Launch offer', code: 'LAUNCH20', type: 'PERCENTAGE', percent_off: '20', duration: 'REPEATING', duration_in_periods: 3, max_redemptions: 100 }] });
export type CreateCouponBody = z.output<typeof createCouponBody>;

export const updateCouponBody = z.strictObject({
  name: z.string().min(1, 'must not be empty').max(255, 'must be at most 255 characters').optional(),
  metadata: metadataSchema.optional(),
});
export type UpdateCouponBody = z.output<typeof updateCouponBody>;

export const listCouponsQuery = z.strictObject({
  ...paginationQuery,
  status: z.enum(COUPON_STATUSES).optional(),
  code: couponCode.optional(),
});
export type ListCouponsQuery = z.output<typeof listCouponsQuery>;

export const couponSchema = z.object({
  id: z.string(),
  name: z.string(),
  code: z.string().nullable(),
  type: z.enum(COUPON_TYPES),
  percent_off: z.string().nullable(),
  amount_off: z.number().int().nullable(),
  currency: z.string().nullable(),
  duration: z.enum(COUPON_DURATIONS),
  duration_in_periods: z.number().int().nullable(),
  applies_to_price_ids: z.array(z.string()).nullable(),
  max_redemptions: z.number().int().nullable(),
  redeem_by: z.string().nullable(),
  times_redeemed: z.number().int(),
  metadata: z.record(z.string(), z.string()),
  status: z.enum(COUPON_STATUSES),
  archived_at: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  tenant_id: z.string(),
  environment_id: z.string(),
});

/** A coupon to attach: by id or by code, exactly one. */
export const discountRefSchema = z
  .strictObject({ coupon_id: id.optional(), code: couponCode.optional() })
  .superRefine((v, ctx) => {
    if ((v.coupon_id === undefined) === (v.code === undefined)) ctx.addIssue({ code: 'custom', path: ['coupon_id'], message: 'exactly one of coupon_id and code is required' });
  })
  .meta({ examples: [{ code: 'LAUNCH20' }] });
export type DiscountRef = z.output<typeof discountRefSchema>;

/** `discounts` of a subscription's creation: coupons attached in this order. */
export const subscriptionDiscountsField = z.array(discountRefSchema).max(20, 'must hold at most 20 discounts');

export const discountSchema = z.object({
  id: z.string(),
  subscription_id: z.string(),
  coupon_id: z.string(),
  /** Billed periods the discount still covers; null: FOREVER. */
  periods_remaining: z.number().int().nullable(),
  status: z.enum(DISCOUNT_STATUSES),
  removed_at: z.string().nullable(),
  created_at: z.string(),
});

const subscriptionDiscountParams = z.strictObject({ id, discount_id: id });

/** Coupons and a subscription's discounts, owned by the billing service. */
export const couponApi = {
  createCoupon: defineRoute({
    operationId: 'createCoupon',
    method: 'post',
    path: '/v1/coupons',
    service: 'billing',
    permission: 'coupons:write',
    summary: "Create a coupon: a PERCENTAGE or FIXED_AMOUNT discount for ONCE, REPEATING or FOREVER billed periods; a code is unique in the environment (409 already_exists)",
    tag: 'Coupons',
    body: createCouponBody,
    response: couponSchema,
    status: 201,
    errors: [404, 409],
  }),
  listCoupons: defineRoute({
    operationId: 'listCoupons',
    method: 'get',
    path: '/v1/coupons',
    service: 'billing',
    permission: 'coupons:read',
    summary: 'List coupons, oldest first, by status or code',
    tag: 'Coupons',
    query: listCouponsQuery,
    response: listResponse(couponSchema),
    status: 200,
  }),
  getCoupon: defineRoute({
    operationId: 'getCoupon',
    method: 'get',
    path: '/v1/coupons/:id',
    service: 'billing',
    permission: 'coupons:read',
    summary: 'One coupon with its redemptions',
    tag: 'Coupons',
    params: idParams,
    response: couponSchema,
    status: 200,
    errors: [404],
  }),
  updateCoupon: defineRoute({
    operationId: 'updateCoupon',
    method: 'put',
    path: '/v1/coupons/:id',
    service: 'billing',
    permission: 'coupons:write',
    summary: "Change a coupon's name or metadata (its terms never change); If-Match with a stale ETag gives 409 version_conflict",
    tag: 'Coupons',
    params: idParams,
    body: updateCouponBody,
    response: couponSchema,
    status: 200,
    errors: [404, 409],
  }),
  archiveCoupon: defineRoute({
    operationId: 'archiveCoupon',
    method: 'delete',
    path: '/v1/coupons/:id',
    service: 'billing',
    permission: 'coupons:write',
    summary: 'Archive a coupon: it is attached to no more subscriptions; discounts made from it go on',
    tag: 'Coupons',
    params: idParams,
    status: 204,
    errors: [404],
  }),
  attachDiscount: defineRoute({
    operationId: 'attachDiscount',
    method: 'post',
    path: '/v1/subscriptions/:id/discounts',
    service: 'billing',
    permission: 'subscriptions:write',
    summary: 'Attach a coupon to a subscription: it discounts the invoices made from now on, for its duration in billed periods',
    tag: 'Coupons',
    params: idParams,
    body: discountRefSchema,
    response: discountSchema,
    status: 201,
    errors: [404, 409],
  }),
  listDiscounts: defineRoute({
    operationId: 'listDiscounts',
    method: 'get',
    path: '/v1/subscriptions/:id/discounts',
    service: 'billing',
    permission: 'subscriptions:read',
    summary: "A subscription's discounts, in attach order, a page at a time",
    tag: 'Coupons',
    params: idParams,
    query: z.strictObject({ ...paginationQuery }),
    response: listResponse(discountSchema),
    status: 200,
    errors: [404],
  }),
  removeDiscount: defineRoute({
    operationId: 'removeDiscount',
    method: 'delete',
    path: '/v1/subscriptions/:id/discounts/:discount_id',
    service: 'billing',
    permission: 'subscriptions:write',
    summary: 'Remove a discount: invoices made from now on no longer take it',
    tag: 'Coupons',
    params: subscriptionDiscountParams,
    status: 204,
    errors: [404],
  }),
};

export const couponRoutes: RouteDef[] = Object.values(couponApi) as RouteDef[];
