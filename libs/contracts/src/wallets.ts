import { z } from 'zod';
import { decimalString, isoTimestamp, listResponse, metadataSchema, paginationQuery, positiveDecimalString, queryBoolean } from './common';
import { defineRoute, type RouteDef } from './routes';

export const WALLET_TYPES = ['PRE_PAID', 'POST_PAID'] as const;
export const WALLET_STATUSES = ['active', 'frozen', 'closed'] as const;
export const WALLET_ALERT_STATES = ['ok', 'info', 'warning', 'critical'] as const;
export const PRICE_TYPES = ['USAGE', 'FIXED', 'ALL'] as const;
export const WALLET_TRANSACTION_TYPES = ['CREDIT', 'DEBIT'] as const;
export const WALLET_TRANSACTION_STATUSES = ['PENDING', 'COMPLETED', 'FAILED'] as const;
export const CREDIT_REASONS = [
  'FREE_CREDIT_GRANT',
  'SUBSCRIPTION_CREDIT_GRANT',
  'PURCHASED_CREDIT_INVOICED',
  'PURCHASED_CREDIT_DIRECT',
  'CREDIT_NOTE',
] as const;
/** Debit reasons a client may send. */
export const CLIENT_DEBIT_REASONS = ['MANUAL_BALANCE_DEBIT', 'INVOICE_PAYMENT'] as const;
/** Debit reasons the wallet service writes itself (expiry, termination, credits applied to an invoice). */
export const SYSTEM_DEBIT_REASONS = ['CREDIT_EXPIRED', 'WALLET_TERMINATION', 'INVOICE_CREDIT_APPLIED', 'RESERVATION_CAPTURE'] as const;
export const TRANSACTION_REASONS = [...CREDIT_REASONS, ...CLIENT_DEBIT_REASONS, ...SYSTEM_DEBIT_REASONS] as const;

export const nonNegativeDecimalString = decimalString.refine((v) => !v.startsWith('-'), 'must be 0 or more');

const alertLevel = z.strictObject({
  threshold: decimalString,
  condition: z.literal('below').default('below'),
});

export const alertSettingsBody = z.strictObject({
  alert_enabled: z.boolean().default(true),
  critical: alertLevel.optional(),
  warning: alertLevel.optional(),
  info: alertLevel.optional(),
});

export const autoTopupBody = z
  .strictObject({
    enabled: z.boolean(),
    threshold: nonNegativeDecimalString.optional(),
    amount: positiveDecimalString.optional(),
    invoicing: z.boolean().default(false),
  })
  .superRefine((v, ctx) => {
    if (!v.enabled) return;
    for (const key of ['threshold', 'amount'] as const) {
      if (v[key] === undefined) ctx.addIssue({ code: 'custom', path: [key], message: 'is required when enabled is true' });
    }
  });

const walletIdParams = z.strictObject({ id: z.string().min(1) });

export const createWalletBody = z.strictObject({
  customer_id: z.string().min(1).max(255),
  currency: z.string().regex(/^[A-Za-z]{3}$/, 'must be a 3-letter ISO 4217 code'),
  wallet_type: z.enum(WALLET_TYPES).default('PRE_PAID'),
  conversion_rate: positiveDecimalString.default('1'),
  topup_conversion_rate: positiveDecimalString.optional(),
  initial_credits_to_load: nonNegativeDecimalString.optional(),
  initial_credits_expiry_date_utc: isoTimestamp.optional(),
  description: z.string().max(1000).optional(),
  metadata: metadataSchema.optional(),
  auto_topup: autoTopupBody.optional(),
  alert_settings: alertSettingsBody.optional(),
  config: z.strictObject({ allowed_price_types: z.array(z.enum(PRICE_TYPES)).min(1, 'needs at least one price type') }).optional(),
});

export const updateWalletBody = z.strictObject({
  auto_topup: autoTopupBody.nullable().optional(),
  alert_settings: alertSettingsBody.nullable().optional(),
  description: z.string().max(1000).nullable().optional(),
  metadata: metadataSchema.optional(),
  wallet_status: z.enum(['active', 'frozen'], 'must be active or frozen (POST /v1/wallets/{id}/terminate closes a wallet)').optional(),
});

export const idempotencyKey = z.string().min(1).max(255);

export const topupBody = z.strictObject({
  credits_to_add: positiveDecimalString,
  transaction_reason: z.enum(CREDIT_REASONS).default('PURCHASED_CREDIT_DIRECT'),
  expiry_date_utc: isoTimestamp.optional(),
  priority: z.number().int('must be an integer').min(0, 'must be 0 or more').max(2_147_483_647).optional(),
  description: z.string().max(1000).optional(),
  idempotency_key: idempotencyKey.optional(),
});

export const debitBody = z.strictObject({
  credits: positiveDecimalString,
  transaction_reason: z.enum(CLIENT_DEBIT_REASONS).default('MANUAL_BALANCE_DEBIT'),
  description: z.string().max(1000).optional(),
  idempotency_key: idempotencyKey.optional(),
});

export const settleBody = z.strictObject({ status: z.enum(['COMPLETED', 'FAILED']) });

const alertLevelView = z.object({ threshold: z.string(), condition: z.literal('below') });

/**
 * Reservations (docs/api/reservations.md): credits held by the wallet's live holds, and what a
 * new hold or debit can still take (the lower of credit_balance and the real-time credit
 * balance, less the holds; never below 0). On reads (GET, lists); event payloads leave them out.
 */
const heldCredits = {
  credits_held: z.string().optional(),
  credits_available: z.string().optional(),
};

export const walletSchema = z.object({
  id: z.string(),
  customer_id: z.string(),
  currency: z.string(),
  wallet_type: z.enum(WALLET_TYPES),
  wallet_status: z.enum(WALLET_STATUSES),
  balance: z.string(),
  credit_balance: z.string(),
  conversion_rate: z.string(),
  topup_conversion_rate: z.string(),
  config: z.object({ allowed_price_types: z.array(z.enum(PRICE_TYPES)) }),
  description: z.string().nullable(),
  metadata: z.record(z.string(), z.string()),
  auto_topup: z
    .object({ enabled: z.boolean(), threshold: z.string().nullable(), amount: z.string().nullable(), invoicing: z.boolean() })
    .nullable(),
  alert_settings: z
    .object({ alert_enabled: z.boolean(), critical: alertLevelView.optional(), warning: alertLevelView.optional(), info: alertLevelView.optional() })
    .nullable(),
  alert_state: z.enum(WALLET_ALERT_STATES),
  ...heldCredits,
  tenant_id: z.string(),
  environment_id: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
});

export const walletTransactionSchema = z.object({
  id: z.string(),
  wallet_id: z.string(),
  type: z.enum(WALLET_TRANSACTION_TYPES),
  transaction_status: z.enum(WALLET_TRANSACTION_STATUSES),
  credit_amount: z.string(),
  amount: z.string(),
  credit_balance_before: z.string(),
  credit_balance_after: z.string(),
  credits_available: z.string(),
  expiry_date: z.string().nullable(),
  priority: z.number().int().nullable(),
  transaction_reason: z.enum(TRANSACTION_REASONS),
  description: z.string().nullable(),
  idempotency_key: z.string().nullable(),
  tenant_id: z.string(),
  environment_id: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
});

export const walletBalanceSchema = z.object({
  wallet_id: z.string(),
  currency: z.string(),
  balance: z.string(),
  credit_balance: z.string(),
  conversion_rate: z.string(),
  credits_available_breakdown: z.object({ purchased: z.string(), free: z.string() }),
  ...heldCredits,
  real_time_balance: z.string().optional(),
  real_time_credit_balance: z.string().optional(),
  /**
   * With `include_real_time_balance=true`: the unbilled usage charges taken off the real-time
   * balances, an integer in minor units of the wallet's currency (0 for a wallet that does not
   * pay usage), and the time up to which that usage was read (null before the first reading).
   */
  unbilled_usage: z.number().int().optional(),
  as_of: z.string().nullable().optional(),
});

export const expireCreditsResultSchema = z.object({
  expired_transactions: z.number().int(),
  wallets_affected: z.number().int(),
});

export const walletApi = {
  create: defineRoute({
    operationId: 'createWallet',
    method: 'post',
    path: '/v1/wallets',
    service: 'wallet',
    permission: 'wallets:write',
    summary: 'Create a wallet for a customer and currency, optionally with initial free credits',
    tag: 'Wallets',
    body: createWalletBody,
    response: walletSchema,
    status: 201,
    errors: [404, 409],
  }),
  get: defineRoute({
    operationId: 'getWallet',
    method: 'get',
    path: '/v1/wallets/:id',
    service: 'wallet',
    permission: 'wallets:read',
    summary: 'Get a wallet (with an ETag for If-Match on PATCH)',
    tag: 'Wallets',
    params: walletIdParams,
    response: walletSchema,
    status: 200,
    errors: [404],
  }),
  update: defineRoute({
    operationId: 'updateWallet',
    method: 'patch',
    path: '/v1/wallets/:id',
    service: 'wallet',
    permission: 'wallets:write',
    summary: 'Update the non-balance fields of a wallet, or freeze and unfreeze it',
    tag: 'Wallets',
    params: walletIdParams,
    body: updateWalletBody,
    response: walletSchema,
    status: 200,
    errors: [404, 409],
  }),
  terminate: defineRoute({
    operationId: 'terminateWallet',
    method: 'post',
    path: '/v1/wallets/:id/terminate',
    service: 'wallet',
    permission: 'wallets:write',
    summary: 'Close a wallet for good; its remaining credits are debited (WALLET_TERMINATION)',
    tag: 'Wallets',
    params: walletIdParams,
    body: z.strictObject({}),
    response: walletSchema,
    status: 200,
    errors: [404],
  }),
  topup: defineRoute({
    operationId: 'topupWallet',
    method: 'post',
    path: '/v1/wallets/:id/topup',
    service: 'wallet',
    permission: 'wallets:write',
    summary: 'Add credits (PURCHASED_CREDIT_INVOICED creates a PENDING credit)',
    tag: 'Wallets',
    params: walletIdParams,
    body: topupBody,
    response: walletTransactionSchema,
    status: 201,
    errors: [404, 409],
  }),
  debit: defineRoute({
    operationId: 'debitWallet',
    method: 'post',
    path: '/v1/wallets/:id/debit',
    service: 'wallet',
    permission: 'wallets:write',
    summary: 'Spend credits in priority, expiry and age order; never more than the usable credits',
    tag: 'Wallets',
    params: walletIdParams,
    body: debitBody,
    response: walletTransactionSchema,
    status: 201,
    errors: [404, 409],
  }),
  balance: defineRoute({
    operationId: 'getWalletBalance',
    method: 'get',
    path: '/v1/wallets/:id/balance',
    service: 'wallet',
    permission: 'wallets:read',
    summary: 'Balance, credit balance, free and purchased credits, and optionally the real-time balance',
    tag: 'Wallets',
    params: walletIdParams,
    query: z.strictObject({ include_real_time_balance: queryBoolean.optional() }),
    response: walletBalanceSchema,
    status: 200,
    errors: [404],
  }),
  listTransactions: defineRoute({
    operationId: 'listWalletTransactions',
    method: 'get',
    path: '/v1/wallets/:id/transactions',
    service: 'wallet',
    permission: 'wallets:read',
    summary: 'Transactions of a wallet, newest first',
    tag: 'Wallets',
    params: walletIdParams,
    query: z.strictObject({
      type: z.enum(WALLET_TRANSACTION_TYPES).optional(),
      transaction_status: z.enum(WALLET_TRANSACTION_STATUSES).optional(),
      transaction_reason: z.enum(TRANSACTION_REASONS).optional(),
      ...paginationQuery,
    }),
    response: listResponse(walletTransactionSchema),
    status: 200,
    errors: [404],
  }),
  settle: defineRoute({
    operationId: 'settleWalletTransaction',
    method: 'post',
    path: '/v1/wallets/:id/transactions/:transaction_id/settle',
    service: 'wallet',
    permission: 'wallets:write',
    summary: 'Complete or fail a PENDING transaction (an invoiced top-up\'s credit is settled by its invoice only: 409)',
    tag: 'Wallets',
    params: z.strictObject({ id: z.string().min(1), transaction_id: z.string().min(1) }),
    body: settleBody,
    response: walletTransactionSchema,
    status: 200,
    errors: [404, 409],
  }),
  listByCustomer: defineRoute({
    operationId: 'listCustomerWallets',
    method: 'get',
    path: '/v1/customers/:id/wallets',
    service: 'wallet',
    permission: 'wallets:read',
    summary: 'Wallets of a customer, oldest first',
    tag: 'Wallets',
    params: z.strictObject({ id: z.string().min(1) }),
    query: z.strictObject({ ...paginationQuery }),
    response: listResponse(walletSchema),
    status: 200,
    errors: [404],
  }),
  expireCredits: defineRoute({
    operationId: 'expireCredits',
    method: 'post',
    path: '/v1/cron/expire-credits',
    service: 'wallet',
    permission: 'wallets:write',
    summary: "Write off expired credits of the caller's wallets now (the service also does it every minute)",
    tag: 'Wallets',
    body: z.strictObject({}),
    response: expireCreditsResultSchema,
    status: 200,
  }),
};

/** Wallet API (issue #4). */
export const walletRoutes: RouteDef[] = Object.values(walletApi) as RouteDef[];
