import { z } from 'zod';
import { isoTimestamp } from '../common';
import { defineRoute } from '../routes';
import { CREDIT_REASONS, PRICE_TYPES, idempotencyKey, walletTransactionSchema } from '../wallets';

/**
 * The wallet service's internal credit of a customer (not in ALL_ROUTES: the gateway does not
 * route it, the OpenAPI document does not show it). Billing calls it for credit grants
 * (reason SUBSCRIPTION_CREDIT_GRANT); later steps reuse it for an invoice's excess credit and
 * credit note refunds (reason CREDIT_NOTE, `allowed_price_types` ["ALL"], money as `amount`;
 * ADR 0041). ADR 0039.
 */
const positiveDecimal = z
  .string()
  .regex(/^(0|[1-9]\d{0,27})(\.\d{1,18})?$/, 'must be a decimal number written as a string, e.g. "100"')
  .refine((v) => /[1-9]/.test(v), 'must be greater than 0');

export const internalCreditBody = z
  .strictObject({
  customer_id: z.string().min(1).max(255),
  currency: z
    .string()
    .regex(/^[A-Za-z]{3}$/, 'must be a 3-letter ISO 4217 code')
    .transform((v) => v.toLowerCase()),
  /** Credits to add; or `amount`. */
  credits: positiveDecimal.optional(),
  /** Money in major units of the currency (credit note refunds): credits = amount ÷ the wallet's rate, rounded up to 12 decimals (docs/api/wallets.md#money-billing-gives-back-as-credits). */
  amount: positiveDecimal.optional(),
  transaction_reason: z.enum(CREDIT_REASONS),
  /** Must be in the future for a new credit; a repeat of a stored key answers the stored credit whatever the time. */
  expiry_date: isoTimestamp.nullable().default(null),
  priority: z.number().int().min(0).max(2_147_483_647).nullable().default(null),
  description: z.string().max(1000).nullable().default(null),
  /** Unique per tenant and environment: the same key answers the original credit, nothing doubled; another request: 409. */
  idempotency_key: idempotencyKey,
  /** How a missing PRE_PAID wallet is created; an existing one keeps its own configuration. */
  wallet: z.strictObject({
    conversion_rate: positiveDecimal.default('1'),
    allowed_price_types: z.array(z.enum(PRICE_TYPES)).min(1),
  }),
})
  .superRefine((v, ctx) => {
    if ((v.credits === undefined) === (v.amount === undefined)) ctx.addIssue({ code: 'custom', path: ['credits'], message: 'exactly one of credits and amount is required' });
  });
export type InternalCreditBody = z.output<typeof internalCreditBody>;

export const internalCreditSchema = z.object({
  wallet_id: z.string(),
  /** True when this request created the wallet (answered again on a repeat). */
  wallet_created: z.boolean(),
  /** True when the key had credited before: the stored credit, nothing new. */
  replayed: z.boolean(),
  transaction: walletTransactionSchema,
});
export type InternalCredit = z.output<typeof internalCreditSchema>;

/** Credits one batch call carries at most (billing's chunk of grant applications). */
export const MAX_CREDITS_PER_BATCH = 100;

/**
 * Up to MAX_CREDITS_PER_BATCH credits of one tenant and environment, each the single call's
 * body with its own idempotency key (unique within the batch).
 */
export const internalCreditBatchBody = z.strictObject({
  credits: z
    .array(internalCreditBody)
    .min(1, 'must hold at least one credit')
    .max(MAX_CREDITS_PER_BATCH, `must hold at most ${MAX_CREDITS_PER_BATCH} credits`)
    .superRefine((items, ctx) => {
      const seen = new Set<string>();
      items.forEach((item, i) => {
        if (seen.has(item.idempotency_key)) ctx.addIssue({ code: 'custom', path: [i, 'idempotency_key'], message: 'must be unique within the batch' });
        seen.add(item.idempotency_key);
      });
    }),
});
export type InternalCreditBatchBody = z.output<typeof internalCreditBatchBody>;

/**
 * Why an item of a batch credited nothing; nothing is stored under its key. `expired` (the
 * single call's 400 `expiry_date`) and `customer_deleted` (its 404 `customer_id`) are final;
 * `wallet_not_active` (its 400 `wallet_status`: the customer's PRE_PAID wallet is frozen) may
 * pass: the caller tries again later.
 */
export const CREDIT_REFUSALS = ['expired', 'customer_deleted', 'wallet_not_active'] as const;
export type CreditRefusal = (typeof CREDIT_REFUSALS)[number];

export const internalCreditOutcomeSchema = z.discriminatedUnion('status', [
  internalCreditSchema.extend({ status: z.literal('credited'), idempotency_key: z.string() }),
  z.object({
    status: z.literal('refused'),
    idempotency_key: z.string(),
    reason: z.enum(CREDIT_REFUSALS),
    /** The field the single call's error names: `expiry_date`, `customer_id` or `wallet_status`. */
    field: z.string(),
    message: z.string(),
  }),
]);
export type InternalCreditOutcome = z.output<typeof internalCreditOutcomeSchema>;

/** The outcomes in the order of the request's credits. */
export const internalCreditBatchSchema = z.object({ results: z.array(internalCreditOutcomeSchema) });
export type InternalCreditBatch = z.output<typeof internalCreditBatchSchema>;

export const walletCreditsInternalApi = {
  creditCustomer: defineRoute({
    operationId: 'internalCreditCustomer',
    method: 'post',
    path: '/internal/v1/credits',
    service: 'wallet',
    permission: 'wallets:write',
    summary: "Credit the customer's PRE_PAID wallet of the currency (created when missing), once per idempotency key",
    tag: 'Internal',
    body: internalCreditBody,
    response: internalCreditSchema,
    status: 201,
    errors: [404, 409],
  }),
  /**
   * Many credits in one wallet transaction, each exactly as `creditCustomer` would make it
   * (ADR 0048): a stored key answers its credit; an expired credit, a deleted customer or a
   * frozen wallet is that item's refusal; a key stored with another request refuses the whole
   * batch (409) and nothing is written.
   */
  creditCustomers: defineRoute({
    operationId: 'internalCreditCustomers',
    method: 'post',
    path: '/internal/v1/credits/batch',
    service: 'wallet',
    permission: 'wallets:write',
    summary: "Credit many customers' PRE_PAID wallets in one call, once per idempotency key (the period job's credit grants)",
    tag: 'Internal',
    body: internalCreditBatchBody,
    response: internalCreditBatchSchema,
    status: 200,
    errors: [409],
  }),
};
