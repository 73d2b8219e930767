import { z } from 'zod';
import { listResponse, metadataSchema, paginationQuery, positiveDecimalString } from './common';
import { defineRoute, type RouteDef } from './routes';
import { usageEventInput } from './usage-events';
import { idempotencyKey, nonNegativeDecimalString } from './wallets';

/** What a reservation is; a held one past `expires_at` reads as `expired` (docs/api/reservations.md). */
export const RESERVATION_STATUSES = ['held', 'committed', 'released', 'expired'] as const;
/** Longest hold a reservation may ask for, in seconds. */
export const RESERVATION_MAX_EXPIRES_IN = 86_400;

export const createReservationBody = z
  .strictObject({
    customer_id: z.string().min(1).max(255).optional(),
    external_customer_id: z.string().min(1).max(255).optional(),
    currency: z.string().regex(/^[A-Za-z]{3}$/, 'must be a 3-letter ISO 4217 code').optional(),
    credits: positiveDecimalString.optional(),
    amount: positiveDecimalString.optional(),
    /** A hold of a METERED hard-limit entitlement (with `quantity`) instead of credits. */
    feature_id: z.string().min(1).max(255).optional(),
    quantity: positiveDecimalString.optional(),
    expires_in: z
      .number()
      .int('must be an integer')
      .min(1, `must be between 1 and ${RESERVATION_MAX_EXPIRES_IN}`)
      .max(RESERVATION_MAX_EXPIRES_IN, `must be between 1 and ${RESERVATION_MAX_EXPIRES_IN}`)
      .default(300),
    allow_overage: z.boolean().default(false),
    idempotency_key: idempotencyKey,
    metadata: metadataSchema.optional(),
  })
  .superRefine((v, ctx) => {
    if ((v.customer_id === undefined) === (v.external_customer_id === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['customer_id'], message: 'give exactly one of customer_id and external_customer_id' });
    }
    if (v.feature_id !== undefined || v.quantity !== undefined) {
      // A hold of an entitlement: feature_id and quantity, no credits, amount, currency or overage.
      if (v.feature_id === undefined) ctx.addIssue({ code: 'custom', path: ['feature_id'], message: 'is required with quantity' });
      if (v.quantity === undefined) ctx.addIssue({ code: 'custom', path: ['quantity'], message: 'is required with feature_id' });
      for (const field of ['credits', 'amount', 'currency'] as const) {
        if (v[field] !== undefined) ctx.addIssue({ code: 'custom', path: [field], message: 'must not be given with feature_id and quantity' });
      }
      if (v.allow_overage) ctx.addIssue({ code: 'custom', path: ['allow_overage'], message: 'is not supported for holds of an entitlement' });
      return;
    }
    if (v.currency === undefined) ctx.addIssue({ code: 'custom', path: ['currency'], message: 'is required' });
    if ((v.credits === undefined) === (v.amount === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['credits'], message: 'give exactly one of credits and amount' });
    }
  })
  .meta({ examples: [{ customer_id: 'cust_01JB8Z9Y7X6W5V4T3S2R1Q0P9N', currency: 'usd', credits: '4000', expires_in: 120, idempotency_key: 'llm-call-2026-01-15-0001' }] });

/**
 * A commit by credits (one RESERVATION_CAPTURE debit, the rest released), or, of a hold of an
 * entitlement, by `quantity` (a usage event of its meter, the rest released). `allow_overage`
 * here lets a credits commit exceed the hold (else the reservation's own). `event` (a commit by
 * usage event) sends the event and keeps the hold until it is counted (ADR 0070).
 */
export const commitReservationBody = z.strictObject({
  credits: nonNegativeDecimalString.optional(),
  quantity: nonNegativeDecimalString.optional(),
  allow_overage: z.boolean().optional(),
  /** A commit by usage event: ingested once (`event_id` = the reservation id), the hold kept until it is counted. */
  event: usageEventInput.optional(),
}).superRefine((v, ctx) => {
  const given = (['credits', 'quantity', 'event'] as const).filter((f) => v[f] !== undefined);
  if (given.length > 1) ctx.addIssue({ code: 'custom', path: [given[1]], message: 'give exactly one of credits, quantity and event' });
  if (v.allow_overage !== undefined && v.credits === undefined) ctx.addIssue({ code: 'custom', path: ['allow_overage'], message: 'only goes with credits' });
}).meta({ examples: [{ credits: '1234.5' }] });

export const reservationSchema = z.object({
  id: z.string(),
  status: z.enum(RESERVATION_STATUSES),
  customer_id: z.string(),
  /** The wallet of a hold of credits; null for a hold of an entitlement. */
  wallet_id: z.string().nullable(),
  currency: z.string().nullable(),
  credits_held: z.string().nullable(),
  /** A hold of a METERED entitlement: what it holds; null for a hold of credits. */
  entitlement: z
    .object({ feature_id: z.string(), feature_lookup_key: z.string(), meter_id: z.string(), entitlement_ids: z.array(z.string()) })
    .nullable(),
  quantity_held: z.string().nullable(),
  /** What a quantity commit counted as usage; null until committed. */
  quantity_committed: z.string().nullable(),
  /** What the commit debited; null until committed. */
  credits_committed: z.string().nullable(),
  /** The RESERVATION_CAPTURE debit of the commit (null before, or when it committed 0). */
  transaction_id: z.string().nullable(),
  allow_overage: z.boolean(),
  expires_at: z.string(),
  idempotency_key: z.string(),
  metadata: z.record(z.string(), z.string()),
  tenant_id: z.string(),
  environment_id: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
  /** When it was committed, released or expired; null while held. */
  ended_at: z.string().nullable(),
  /** A commit by usage event (or by quantity): the event's id (the reservation's), null otherwise. */
  event_id: z.string().nullable(),
  /** When the committed event was counted and the hold stopped counting; null before, and for commits without an event. */
  settled_at: z.string().nullable(),
});

const reservationIdParams = z.strictObject({ id: z.string().min(1) });

export const reservationApi = {
  create: defineRoute({
    operationId: 'createReservation',
    method: 'post',
    path: '/v1/reservations',
    service: 'wallet',
    permission: 'reservations:write',
    summary: "Hold credits of a customer's PRE_PAID wallet, or quantity of a METERED hard-limit entitlement, before the work starts (402 when what is available falls short)",
    tag: 'Reservations',
    body: createReservationBody,
    response: reservationSchema,
    status: 201,
    errors: [402, 404, 409],
  }),
  get: defineRoute({
    operationId: 'getReservation',
    method: 'get',
    path: '/v1/reservations/:id',
    service: 'wallet',
    permission: 'reservations:read',
    summary: 'Get a reservation (a hold past expires_at reads as expired)',
    tag: 'Reservations',
    params: reservationIdParams,
    response: reservationSchema,
    status: 200,
    errors: [404],
  }),
  list: defineRoute({
    operationId: 'listReservations',
    method: 'get',
    path: '/v1/reservations',
    service: 'wallet',
    permission: 'reservations:read',
    summary: 'Reservations, newest first, of a customer and status',
    tag: 'Reservations',
    query: z.strictObject({
      customer_id: z.string().min(1).optional(),
      status: z.enum(RESERVATION_STATUSES).optional(),
      ...paginationQuery,
    }),
    response: listResponse(reservationSchema),
    status: 200,
  }),
  commit: defineRoute({
    operationId: 'commitReservation',
    method: 'post',
    path: '/v1/reservations/:id/commit',
    service: 'wallet',
    permission: 'reservations:write',
    summary: 'Debit the actual spend of a hold (RESERVATION_CAPTURE), or count the used quantity as usage, and release the rest',
    tag: 'Reservations',
    params: reservationIdParams,
    body: commitReservationBody,
    response: reservationSchema,
    status: 200,
    errors: [402, 404],
  }),
  release: defineRoute({
    operationId: 'releaseReservation',
    method: 'post',
    path: '/v1/reservations/:id/release',
    service: 'wallet',
    permission: 'reservations:write',
    summary: 'Release a hold whole (the work did not happen)',
    tag: 'Reservations',
    params: reservationIdParams,
    body: z.strictObject({}),
    response: reservationSchema,
    status: 200,
    errors: [404],
  }),
};

/** Reservation API (issue #51, docs/api/reservations.md). */
export const reservationRoutes: RouteDef[] = Object.values(reservationApi) as RouteDef[];
