import { z } from 'zod';
import { isKnownCurrency, minorDigits } from '@billstream/money';
import { defineRoute } from '../routes';
import { settleBody, walletTransactionSchema } from '../wallets';

/**
 * Internal endpoints of the wallet service that the billing service calls to move credits
 * for invoices, exactly once (docs/adr/0016-invoices-exactly-once.md). They are not public:
 * they are NOT in ALL_ROUTES, so the gateway does not route them and the OpenAPI document does
 * not show them. The wallet service mounts them with `mountRoute` behind the internal token
 * like its public routes; `permission` and `tag` are kept for the route shape only.
 */

/** An integer amount in minor units of the invoice currency (JSON number, exact up to 2^53 - 1). */
const minorUnits = z.number().int('must be an integer in minor units').min(0, 'must be 0 or more').max(Number.MAX_SAFE_INTEGER);
const positiveMinorUnits = minorUnits.refine((v) => v > 0, 'must be greater than 0');

const invoiceParams = z.strictObject({ invoice_id: z.string().min(1).max(255) });

const currencyFields = {
  customer_id: z.string().min(1).max(255),
  currency: z
    .string()
    .regex(/^[A-Za-z]{3}$/, 'must be a 3-letter ISO 4217 code')
    .transform((v) => v.toLowerCase()),
  /** Minor digits of the currency (usd 2, jpy 0, kwd 3): amounts are x 10^-exponent of the major unit. */
  exponent: z.number().int('must be an integer').min(0).max(6),
};

/** For an ISO 4217 currency, the exponent must be its minor digits: a wrong one would scale the money. */
function exponentMatchesCurrency(v: { currency: string; exponent: number }, ctx: z.RefinementCtx): void {
  if (isKnownCurrency(v.currency) && minorDigits(v.currency) !== v.exponent) {
    ctx.addIssue({ code: 'custom', path: ['exponent'], message: `must be ${minorDigits(v.currency)}, the minor digits of ${v.currency}` });
  }
}

/** An allocation's exponent matches its currency and its line ids are unique. */
function allocationChecks(v: { currency: string; exponent: number; lines: Array<{ id: string }> }, ctx: z.RefinementCtx): void {
  exponentMatchesCurrency(v, ctx);
  const seen = new Set<string>();
  v.lines.forEach((line, i) => {
    if (seen.has(line.id)) ctx.addIssue({ code: 'custom', path: ['lines', i, 'id'], message: 'must be unique within the invoice' });
    seen.add(line.id);
  });
}

export const INVOICE_LINE_PRICE_TYPES = ['USAGE', 'FIXED'] as const;

export const invoiceAllocationBody = z
  .strictObject({
    ...currencyFields,
    lines: z
      .array(z.strictObject({ id: z.string().min(1).max(255), price_type: z.enum(INVOICE_LINE_PRICE_TYPES), amount: minorUnits }))
      .max(10_000),
    /** Answer what would be applied now, writing and debiting nothing (billing's upcoming invoice). */
    dry_run: z.boolean().default(false),
  })
  .superRefine(allocationChecks);

const debitView = {
  wallet_id: z.string(),
  /** The wallet transaction (DEBIT) that paid. */
  transaction_id: z.string(),
  /** Credits debited, a decimal string. */
  credits: z.string(),
  /** Minor units of the invoice currency the debit pays. */
  amount: z.number().int(),
};

export const INVOICE_ALLOCATION_STATUSES = ['allocated', 'voided'] as const;

export const invoiceAllocationSchema = z.object({
  invoice_id: z.string(),
  status: z.enum(INVOICE_ALLOCATION_STATUSES),
  /** The PRE_PAID wallet's credits applied line by line (only lines it applied to); null when it applied nothing. */
  prepaid: z.object({ ...debitView, lines: z.array(z.object({ id: z.string(), amount: z.number().int() })) }).nullable(),
  /** The POST_PAID wallet's payment of what the prepaid credits left; null when it paid nothing. */
  postpaid: z.object(debitView).nullable(),
});

/** One invoice of a batch allocation: the single allocation's body with the invoice id, no dry run. */
export const invoiceAllocationsBatchItem = z
  .strictObject({
    invoice_id: invoiceParams.shape.invoice_id,
    ...currencyFields,
    lines: invoiceAllocationBody.shape.lines,
  })
  .superRefine(allocationChecks);

export const invoiceAllocationsBatchBody = z.strictObject({
  invoices: z
    .array(invoiceAllocationsBatchItem)
    .min(1, 'must hold at least one invoice')
    .max(500, 'must hold at most 500 invoices')
    .superRefine((items, ctx) => {
      const seen = new Set<string>();
      items.forEach((item, i) => {
        if (seen.has(item.invoice_id)) ctx.addIssue({ code: 'custom', path: [i, 'invoice_id'], message: 'must be unique within the batch' });
        seen.add(item.invoice_id);
      });
    }),
});

/** The allocations in the order of the request's invoices, each as the single endpoint answers it. */
export const invoiceAllocationsBatchSchema = z.object({ allocations: z.array(invoiceAllocationSchema) });

export const invoicePaymentBody = z
  .strictObject({
    payment_id: z.string().min(1).max(255),
    wallet_id: z.string().min(1).max(255),
    ...currencyFields,
    amount: positiveMinorUnits,
  })
  .superRefine(exponentMatchesCurrency);

export const WALLET_INVOICE_PAYMENT_STATUSES = ['paid', 'voided'] as const;

export const invoicePaymentSchema = z.object({
  status: z.enum(WALLET_INVOICE_PAYMENT_STATUSES),
  /** Null when the invoice is voided (nothing was debited). */
  transaction_id: z.string().nullable(),
  credits: z.string().nullable(),
});

export const invoiceRefundSchema = z.object({
  refunds: z.array(
    z.object({
      wallet_id: z.string(),
      /** The CREDIT_NOTE credit; null when skipped. */
      transaction_id: z.string().nullable(),
      credits: z.string(),
      /** The debit this refund gives back. */
      debit_transaction_id: z.string(),
      /** True when the wallet is closed: nothing could be credited back. */
      skipped: z.boolean().optional(),
    }),
  ),
});

/** Wallet credits on invoices (issue #13); called by the billing service only. */
export const walletInternalApi = {
  allocateInvoiceCredits: defineRoute({
    operationId: 'internalAllocateInvoiceCredits',
    method: 'post',
    path: '/internal/v1/invoices/:invoice_id/allocation',
    service: 'wallet',
    permission: 'invoices:write',
    summary: "Apply the customer's PRE_PAID credits and POST_PAID payment to an invoice, once per invoice",
    tag: 'Internal',
    params: invoiceParams,
    body: invoiceAllocationBody,
    response: invoiceAllocationSchema,
    status: 200,
    errors: [409],
  }),
  allocateInvoicesCredits: defineRoute({
    operationId: 'internalAllocateInvoicesCredits',
    method: 'post',
    path: '/internal/v1/invoices/allocations',
    service: 'wallet',
    permission: 'invoices:write',
    summary: 'Allocate the wallets of many invoices in one wallet transaction, once per invoice (the period job)',
    tag: 'Internal',
    body: invoiceAllocationsBatchBody,
    response: invoiceAllocationsBatchSchema,
    status: 200,
    errors: [409],
  }),
  payInvoice: defineRoute({
    operationId: 'internalPayInvoiceWithCredits',
    method: 'post',
    path: '/internal/v1/invoices/:invoice_id/payments',
    service: 'wallet',
    permission: 'invoices:write',
    summary: 'Pay part of an invoice with credits of a wallet, once per payment id',
    tag: 'Internal',
    params: invoiceParams,
    body: invoicePaymentBody,
    response: invoicePaymentSchema,
    status: 200,
    errors: [404, 409],
  }),
  settleInvoicedCredit: defineRoute({
    operationId: 'internalSettleInvoicedCredit',
    method: 'post',
    path: '/internal/v1/wallets/:id/transactions/:transaction_id/settle',
    service: 'wallet',
    permission: 'wallets:write',
    summary: "Complete or fail the PENDING credit of an invoiced top-up (the invoice paid or voided); the same status again answers it, another one is 409",
    tag: 'Internal',
    params: z.strictObject({ id: z.string().min(1), transaction_id: z.string().min(1) }),
    body: settleBody,
    response: walletTransactionSchema,
    status: 200,
    errors: [404, 409],
  }),
  refundInvoice: defineRoute({
    operationId: 'internalRefundInvoice',
    method: 'post',
    path: '/internal/v1/invoices/:invoice_id/refund',
    service: 'wallet',
    permission: 'invoices:write',
    summary: "Credit back every debit of a voided invoice once, and refuse the invoice's later debits",
    tag: 'Internal',
    params: invoiceParams,
    body: z.strictObject({}),
    response: invoiceRefundSchema,
    status: 200,
  }),
};
