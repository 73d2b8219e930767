import { z } from 'zod';
import { listResponse, metadataSchema, paginationQuery, positiveDecimalString } from './common';
import { defineRoute, type RouteDef } from './routes';
import { idempotencyKey, nonNegativeDecimalString } from './wallets';

/** What a reservation is; a held one past `expires_at` reads as `expired` (docs/api/reservations.md). */
export const RESERVATION_STATUSES = ['held', 'committed', 'released', 'expired'] as const;
/** Longest hold a reservation may ask for, in seconds. */
export const RESERVATION_MAX_EXPIRES_IN = 86_400;

export const createReservationBody = z
  .strictObject({
    customer_id: z.string().min(1).max(255).optional(),
    external_customer_id: z.string().min(1).max(255).optional(),
    currency: z.string().regex(/^[A-Za-z]{3}$/, 'must be a 3-letter ISO 4217 code'),
    credits: positiveDecimalString.optional(),
    amount: positiveDecimalString.optional(),
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
    if ((v.credits === undefined) === (v.amount === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['credits'], message: 'give exactly one of credits and amount' });
    }
  })
  .meta({ examples: [{ customer_id: 'cust_01JB8Z9Y7X6W5V4T3S2R1Q0P9N', currency: 'usd', credits: '4000', expires_in: 120, idempotency_key: 'llm-call-2026-01-15-0001' }] });

/**
 * A commit by credits (one RESERVATION_CAPTURE debit, the rest released). `allow_overage` here
 * lets this commit exceed the hold (else the reservation's own). `event` (a commit by usage
 * event) is named by the contract but not built yet: 400 naming `event`.
 */
export const commitReservationBody = z.strictObject({
  credits: nonNegativeDecimalString.optional(),
  allow_overage: z.boolean().optional(),
  event: z.record(z.string(), z.unknown()).optional(),
}).meta({ examples: [{ credits: '1234.5' }] });

export const reservationSchema = z.object({
  id: z.string(),
  status: z.enum(RESERVATION_STATUSES),
  customer_id: z.string(),
  wallet_id: z.string(),
  currency: z.string(),
  credits_held: z.string(),
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
});

const reservationIdParams = z.strictObject({ id: z.string().min(1) });

export const reservationApi = {
  create: defineRoute({
    operationId: 'createReservation',
    method: 'post',
    path: '/v1/reservations',
    service: 'wallet',
    permission: 'reservations:write',
    summary: "Hold credits of a customer's PRE_PAID wallet before the work starts (402 when the available credits fall short)",
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
    summary: 'Debit the actual spend of a hold (RESERVATION_CAPTURE) and release the rest',
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
