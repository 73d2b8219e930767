import { z } from 'zod';
import { paginationQuery, queryBoolean } from '../common';

/** Invoices and payments (docs/api/billing.md#invoices, docs/api/billing.md#credits-on-invoices, docs/api/billing.md#payments): request and response schemas. */
export const INVOICE_STATUSES = ['draft', 'finalized', 'paid', 'voided'] as const;
export type InvoiceStatus = (typeof INVOICE_STATUSES)[number];
/**
 * What can be done to an invoice now (docs/api/billing.md#available-actions), derived by billing
 * from the one module that makes its transitions: `finalize` (POST /v1/invoices/{id}/finalize),
 * `pay` (POST /v1/payments), `credit` (POST /v1/credit_notes), `void` (POST /v1/invoices/{id}/void).
 */
export const INVOICE_ACTIONS = ['finalize', 'pay', 'credit', 'void'] as const;
export type InvoiceAction = (typeof INVOICE_ACTIONS)[number];
export const INVOICE_PAYMENT_STATUSES = ['pending', 'partially_paid', 'succeeded'] as const;
export type InvoicePaymentStatus = (typeof INVOICE_PAYMENT_STATUSES)[number];
export const BILLING_REASONS = [
  'SUBSCRIPTION_CREATE',
  'SUBSCRIPTION_CYCLE',
  'SUBSCRIPTION_PAUSE',
  'SUBSCRIPTION_RESUME',
  'SUBSCRIPTION_CANCEL',
  'CREDIT_PURCHASE',
  'SUBSCRIPTION_UPDATE',
  'SUBSCRIPTION_THRESHOLD',
] as const;
export type BillingReason = (typeof BILLING_REASONS)[number];
/**
 * A line's type (docs/api/billing.md#invoice-arithmetic): CHARGE and COMMITMENT_TRUE_UP bill (amount >= 0);
 * PRORATION_CREDIT and THRESHOLD_DEDUCTION are negative (amount <= 0), offset what other lines
 * have left, and have net_amount 0 and no discount or offset of their own.
 */
export const INVOICE_LINE_TYPES = ['CHARGE', 'COMMITMENT_TRUE_UP', 'PRORATION_CREDIT', 'THRESHOLD_DEDUCTION'] as const;
export type InvoiceLineType = (typeof INVOICE_LINE_TYPES)[number];
export const NEGATIVE_LINE_TYPES = ['PRORATION_CREDIT', 'THRESHOLD_DEDUCTION'] as const satisfies readonly InvoiceLineType[];
export const PAYMENT_METHOD_TYPES = ['OFFLINE', 'CREDITS', 'PROVIDER'] as const;
export type PaymentMethodType = (typeof PAYMENT_METHOD_TYPES)[number];

const id = z.string().min(1, 'must not be empty').max(255, 'must be at most 255 characters');
/** Integer minor units (cents for usd, yen for jpy, fils for kwd). */
const minorUnits = z.number().int();

/** One rate a line bore (docs/api/taxes.md#arithmetic). */
const lineTaxSchema = z
  .object({ tax_rate_id: z.string(), code: z.string(), percentage: z.string(), taxable_amount: minorUnits, amount: minorUnits })
  .meta({ id: 'InvoiceLineTax' });

/** One rate of an invoice's breakdown: what its lines bore of it (0 % rates included). */
const taxBreakdownSchema = z
  .object({
    tax_rate_id: z.string(),
    code: z.string(),
    country: z.string().nullable(),
    region: z.string().nullable(),
    percentage: z.string(),
    taxable_amount: minorUnits,
    amount: minorUnits,
  })
  .meta({ id: 'InvoiceTaxBreakdown' });

export const invoiceLineItemSchema = z
  .object({
    id: z.string(),
    price_id: z.string().nullable(),
    price_type: z.enum(['FIXED', 'USAGE']),
    meter_id: z.string().nullable(),
    description: z.string(),
    quantity: z.string(),
    unit_amount: z.string(),
    line_type: z.enum(INVOICE_LINE_TYPES).meta({ description: 'CHARGE (default) and COMMITMENT_TRUE_UP bill; PRORATION_CREDIT and THRESHOLD_DEDUCTION are negative lines' }),
    amount: minorUnits.meta({ description: 'The line as priced, rounded once; negative on PRORATION_CREDIT and THRESHOLD_DEDUCTION lines' }),
    offset_amount: minorUnits.meta({ description: "What threshold deductions of the line's price and proration credits took off this line; 0 on negative lines" }),
    discount_amount: minorUnits.meta({ description: "This line's part of the invoice's discounts (spread by what lines had left, largest remainder); 0 on negative lines" }),
    net_amount: minorUnits.meta({
      description: 'amount - offset_amount - discount_amount, never below 0 (0 on negative lines): what wallet credits, payments and credit notes work on',
    }),
    credited_amount: minorUnits.meta({ description: 'What credit notes and later proration credits took back of net_amount' }),
    proration_factor: z
      .string()
      .optional()
      .meta({
        description:
          'Only on a prorated FIXED line (a part of a period): part / whole, 12 decimals rounded half up; amount = unit_amount x proration_factor, rounded once. Absent on whole periods',
        examples: ['0.666666666667'],
      }),
    prepaid_credits_applied: minorUnits.meta({ description: 'Wallet credits that paid the line: at most net_amount plus its exclusive tax' }),
    period_start: z.string().nullable(),
    period_end: z.string().nullable(),
    tax_amount: minorUnits.meta({ description: 'The tax the line bears (docs/api/taxes.md#arithmetic): the sum of taxes[].amount; inside net_amount when inclusive, added to it when exclusive' }),
    taxes: z.array(lineTaxSchema),
    tax_behavior: z.enum(['exclusive', 'inclusive']).nullable().meta({ description: 'null on a line that bore no tax step (taxes off)' }),
  })
  .meta({ id: 'InvoiceLineItem' });

/** One discount's amount on an invoice: one per (invoice, discount), replaced when the invoice is recomputed. */
export const invoiceDiscountSchema = z
  .object({
    discount_id: z.string(),
    amount: minorUnits,
  })
  .meta({ id: 'InvoiceDiscount' });

/** Whether an invoice bears its tax yet (docs/api/taxes.md#http-provider). */
export const INVOICE_TAX_STATUSES = ['ok', 'pending', 'failed'] as const;
export type InvoiceTaxStatus = (typeof INVOICE_TAX_STATUSES)[number];

export const invoiceSchema = z
  .object({
    id: z.string(),
    invoice_number: z.string().nullable(),
    customer_id: z.string(),
    subscription_id: z.string().nullable(),
    billing_reason: z.enum(BILLING_REASONS),
    status: z.enum(INVOICE_STATUSES),
    payment_status: z.enum(INVOICE_PAYMENT_STATUSES),
    currency: z.string(),
    period_start: z.string().nullable(),
    period_end: z.string().nullable(),
    due_date: z.string().nullable(),
    overdue: z.boolean(),
    subscription_customer_id: z.string().nullable().meta({ description: "The subscription's customer (null on invoices of no subscription)" }),
    subtotal: minorUnits.meta({ description: "Sum of the lines' amount (negative lines included)" }),
    total_discount: minorUnits.meta({ description: "Sum of discounts[].amount, equal to the sum of the lines' discount_amount" }),
    discounts: z.array(invoiceDiscountSchema),
    excess_credit: minorUnits.meta({ description: 'What negative lines left after offsetting every line: credited to the PRE_PAID wallet at finalization, so no invoice is negative' }),
    total_prepaid_credits_applied: minorUnits,
    total: minorUnits.meta({ description: 'subtotal - total_discount + excess_credit + the exclusive tax - total_prepaid_credits_applied' }),
    total_tax: minorUnits.meta({ description: "The sum of the lines' tax_amount and of tax_breakdown[].amount (docs/api/taxes.md#invoices-bearing-tax)" }),
    total_excluding_tax: minorUnits.meta({ description: 'subtotal - total_discount + excess_credit less the tax inside inclusive lines: what the invoice bills before tax and credits' }),
    tax_breakdown: z.array(taxBreakdownSchema),
    reverse_charge: z.boolean().meta({ description: 'The buyer accounts for the tax (docs/api/taxes.md#which-rates-a-line-bears): no line bears any' }),
    tax_exempt_reason: z.enum(['customer_exempt']).nullable(),
    tax_status: z.enum(INVOICE_TAX_STATUSES).meta({
      description: 'ok: taxed (or nothing to tax); pending: the HTTP tax provider has not answered for it yet; failed: its last call failed, it stays a draft and is retried with backoff (docs/api/taxes.md#http-provider)',
    }),
    buyer_tax: z
      .object({ tax_exempt: z.enum(['none', 'exempt', 'reverse']), tax_ids: z.array(z.object({ type: z.string(), value: z.string() })), address_country: z.string().nullable(), address_state: z.string().nullable() })
      .nullable()
      .meta({ description: "The buyer's tax identity the invoice was taxed with, fixed at finalization; null when taxes are off" }),
    pre_payment_credit_notes_amount: minorUnits.meta({ description: 'Credit notes that lowered what is due (issued before payment)' }),
    post_payment_credit_notes_amount: minorUnits.meta({ description: 'Credit notes that returned money paid (to wallets or refunded)' }),
    amount_due: minorUnits.meta({ description: 'total - pre_payment_credit_notes_amount' }),
    amount_paid: minorUnits,
    amount_remaining: minorUnits.meta({ description: 'amount_due - amount_paid' }),
    hosted_invoice_url: z.string().nullable(),
    invoice_pdf_url: z.string().nullable(),
    line_items: z.array(invoiceLineItemSchema),
    available_actions: z.array(z.enum(INVOICE_ACTIONS)).meta({
      description:
        'What the invoice takes now, from its status and amounts (docs/api/billing.md#available-actions): finalize (a draft), pay (finalized with money remaining), credit (finalized or paid with something creditable, not a purchase of credits), void (draft or finalized). An action not listed is refused with 400',
    }),
    finalized_at: z.string().nullable(),
    voided_at: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
    tenant_id: z.string(),
    environment_id: z.string(),
  })
  .meta({ id: 'Invoice' });
export type InvoiceResponse = z.infer<typeof invoiceSchema>;

/** The invoice the current period's end would make; nothing of it is stored. */
export const upcomingInvoiceSchema = invoiceSchema
  .omit({ id: true, invoice_number: true, available_actions: true, finalized_at: true, voided_at: true, created_at: true, updated_at: true })
  .extend({ as_of: z.string() })
  .meta({ id: 'UpcomingInvoice' });

export const listInvoicesQuery = z
  .strictObject({
    ...paginationQuery,
    customer_id: id.optional(),
    subscription_id: id.optional(),
    status: z.enum(INVOICE_STATUSES).optional(),
    /** With `customer_id`: its descendants' invoices too, each once (docs/api/hierarchy-billing.md#lists-with-include_children). */
    include_children: queryBoolean.optional(),
  })
  .superRefine((q, ctx) => requireCustomerForChildren(q, ctx));
/** `include_children=true` names whose children: `customer_id` is required with it (docs/api/hierarchy-billing.md#lists-with-include_children). */
export function requireCustomerForChildren(q: { customer_id?: string; include_children?: boolean }, ctx: z.RefinementCtx): void {
  if (q.include_children && q.customer_id === undefined) {
    ctx.addIssue({ code: 'custom', path: ['customer_id'], message: 'is required with include_children=true (whose children?)' });
  }
}
export type ListInvoicesQuery = z.output<typeof listInvoicesQuery>;

export const billSubscriptionsResultSchema = z.object({
  invoices_created: z.number().int(),
  subscriptions_billed: z.number().int(),
  invoices_finalized: z.number().int(),
  invoices_marked_overdue: z.number().int(),
});

export const paymentSchema = z
  .object({
    id: z.string(),
    invoice_id: z.string(),
    amount: minorUnits,
    currency: z.string(),
    payment_method_type: z.enum(PAYMENT_METHOD_TYPES),
    wallet_id: z.string().nullable(),
    reference: z.string().nullable(),
    idempotency_key: z.string().nullable(),
    payment_status: z.enum(['pending', 'succeeded', 'failed']),
    /** PROVIDER payments (docs/api/billing.md#processor-payments, docs/api/billing.md#billing-settings-and-dunning): the processor, its reference once settled, why it failed, and the dunning attempt that made it. */
    provider: z.string().nullable(),
    provider_reference: z.string().nullable(),
    failure_reason: z.string().nullable(),
    attempt: z.number().int().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
    tenant_id: z.string(),
    environment_id: z.string(),
  })
  .meta({ id: 'Payment' });
export type PaymentResponse = z.infer<typeof paymentSchema>;

export const createPaymentBody = z
  .strictObject({
    invoice_id: id,
    amount: z.number({ error: 'must be an integer in minor units of the invoice currency' }).int('must be an integer in minor units').min(1, 'must be at least 1').max(Number.MAX_SAFE_INTEGER),
    payment_method_type: z.enum(PAYMENT_METHOD_TYPES, { error: 'must be OFFLINE, CREDITS or PROVIDER' }),
    wallet_id: id.optional(),
    /** The payment processor of a PROVIDER payment (`stripe`, `adyen`, ...): it settles the payment with succeed or fail. */
    provider: z.string().min(1, 'must not be empty').max(64, 'must be at most 64 characters').optional(),
    reference: z.string().max(255, 'must be at most 255 characters').optional(),
    idempotency_key: z.string().min(1, 'must not be empty').max(255, 'must be at most 255 characters').optional(),
  })
  .superRefine((body, ctx) => {
    if (body.payment_method_type === 'CREDITS' && body.wallet_id === undefined) {
      ctx.addIssue({ code: 'custom', path: ['wallet_id'], message: 'is required for a CREDITS payment' });
    }
    if (body.payment_method_type !== 'CREDITS' && body.wallet_id !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['wallet_id'], message: 'is only for CREDITS payments' });
    }
    if (body.payment_method_type === 'PROVIDER' && body.provider === undefined) {
      ctx.addIssue({ code: 'custom', path: ['provider'], message: 'is required for a PROVIDER payment' });
    }
    if (body.payment_method_type !== 'PROVIDER' && body.provider !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['provider'], message: 'is only for PROVIDER payments' });
    }
    if (body.payment_method_type === 'PROVIDER' && body.idempotency_key === undefined) {
      ctx.addIssue({ code: 'custom', path: ['idempotency_key'], message: 'is required for a PROVIDER payment (a retry must not charge twice)' });
    }
  })
  .meta({ examples: [{ invoice_id: 'inv_01JDQ8Z6Y4K2M9N3P5R7T9V1X3', amount: 1250, payment_method_type: 'OFFLINE', reference: 'wire 2026-11-26' }] });
export type CreatePaymentBody = z.output<typeof createPaymentBody>;

export const listPaymentsQuery = z.strictObject({
  ...paginationQuery,
  invoice_id: id.optional(),
});
export type ListPaymentsQuery = z.output<typeof listPaymentsQuery>;

/** `POST /v1/payments/{id}/succeed`: the processor took the money. */
export const succeedPaymentBody = z.strictObject({
  provider_reference: z.string().min(1, 'must not be empty').max(255, 'must be at most 255 characters'),
});
export type SucceedPaymentBody = z.output<typeof succeedPaymentBody>;

/** `POST /v1/payments/{id}/fail`: the processor could not take it. */
export const failPaymentBody = z.strictObject({
  failure_reason: z.string().min(1, 'must not be empty').max(1000, 'must be at most 1000 characters'),
  provider_reference: z.string().min(1, 'must not be empty').max(255, 'must be at most 255 characters').optional(),
});
export type FailPaymentBody = z.output<typeof failPaymentBody>;
