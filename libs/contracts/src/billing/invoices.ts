import { z } from 'zod';
import { paginationQuery } from '../common';

/** Invoices and payments (BILLING.md, Invoices, Credits on invoices, Payments): request and response schemas. */
export const INVOICE_STATUSES = ['draft', 'finalized', 'paid', 'voided'] as const;
export type InvoiceStatus = (typeof INVOICE_STATUSES)[number];
export const INVOICE_PAYMENT_STATUSES = ['pending', 'partially_paid', 'succeeded'] as const;
export type InvoicePaymentStatus = (typeof INVOICE_PAYMENT_STATUSES)[number];
export const BILLING_REASONS = [
  'SUBSCRIPTION_CREATE',
  'SUBSCRIPTION_CYCLE',
  'SUBSCRIPTION_PAUSE',
  'SUBSCRIPTION_RESUME',
  'SUBSCRIPTION_CANCEL',
  'CREDIT_PURCHASE',
] as const;
export type BillingReason = (typeof BILLING_REASONS)[number];
export const PAYMENT_METHOD_TYPES = ['OFFLINE', 'CREDITS'] as const;
export type PaymentMethodType = (typeof PAYMENT_METHOD_TYPES)[number];

const id = z.string().min(1, 'must not be empty').max(255, 'must be at most 255 characters');
/** Integer minor units (cents for usd, yen for jpy, fils for kwd). */
const minorUnits = z.number().int();

export const invoiceLineItemSchema = z
  .object({
    id: z.string(),
    price_id: z.string().nullable(),
    price_type: z.enum(['FIXED', 'USAGE']),
    meter_id: z.string().nullable(),
    description: z.string(),
    quantity: z.string(),
    unit_amount: z.string(),
    amount: minorUnits,
    proration_factor: z
      .string()
      .optional()
      .meta({
        description:
          'Only on a prorated FIXED line (a part of a period): part / whole, 12 decimals rounded half up; amount = unit_amount x proration_factor, rounded once. Absent on whole periods',
        examples: ['0.666666666667'],
      }),
    prepaid_credits_applied: minorUnits,
    period_start: z.string().nullable(),
    period_end: z.string().nullable(),
  })
  .meta({ id: 'InvoiceLineItem' });

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
    subtotal: minorUnits,
    total_prepaid_credits_applied: minorUnits,
    total: minorUnits,
    amount_due: minorUnits,
    amount_paid: minorUnits,
    amount_remaining: minorUnits,
    line_items: z.array(invoiceLineItemSchema),
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
  .omit({ id: true, invoice_number: true, finalized_at: true, voided_at: true, created_at: true, updated_at: true })
  .extend({ as_of: z.string() })
  .meta({ id: 'UpcomingInvoice' });

export const listInvoicesQuery = z.strictObject({
  ...paginationQuery,
  customer_id: id.optional(),
  subscription_id: id.optional(),
  status: z.enum(INVOICE_STATUSES).optional(),
});
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
    payment_status: z.enum(['pending', 'succeeded']),
    created_at: z.string(),
    tenant_id: z.string(),
    environment_id: z.string(),
  })
  .meta({ id: 'Payment' });
export type PaymentResponse = z.infer<typeof paymentSchema>;

export const createPaymentBody = z
  .strictObject({
    invoice_id: id,
    amount: z.number({ error: 'must be an integer in minor units of the invoice currency' }).int('must be an integer in minor units').min(1, 'must be at least 1').max(Number.MAX_SAFE_INTEGER),
    payment_method_type: z.enum(PAYMENT_METHOD_TYPES, { error: 'must be OFFLINE or CREDITS' }),
    wallet_id: id.optional(),
    reference: z.string().max(255, 'must be at most 255 characters').optional(),
    idempotency_key: z.string().min(1, 'must not be empty').max(255, 'must be at most 255 characters').optional(),
  })
  .superRefine((body, ctx) => {
    if (body.payment_method_type === 'CREDITS' && body.wallet_id === undefined) {
      ctx.addIssue({ code: 'custom', path: ['wallet_id'], message: 'is required for a CREDITS payment' });
    }
    if (body.payment_method_type === 'OFFLINE' && body.wallet_id !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['wallet_id'], message: 'is only for CREDITS payments' });
    }
  })
  .meta({ examples: [{ invoice_id: 'inv_01JDQ8Z6Y4K2M9N3P5R7T9V1X3', amount: 1250, payment_method_type: 'OFFLINE', reference: 'wire 2026-11-26' }] });
export type CreatePaymentBody = z.output<typeof createPaymentBody>;

export const listPaymentsQuery = z.strictObject({
  ...paginationQuery,
  invoice_id: id.optional(),
});
export type ListPaymentsQuery = z.output<typeof listPaymentsQuery>;
