import type { InvoiceTaxStatus } from '@billstream/contracts';
import type { DiscountAmount } from '../invoice-arithmetic';
import type { BuyerTax, Invoice, InvoiceLine, TaxBreakdownLine, ThresholdReturn } from './domain';

/**
 * The rows of `invoices` and `invoice_line_items` and their mapping to the domain: money
 * columns are BIGINT minor units (pg answers strings: read with Number), a line's quantity and
 * unit amount text decimal strings (ADR 0037).
 */
export interface InvoiceRow {
  id: string;
  tenant_id: string;
  environment_id: string;
  customer_id: string;
  subscription_id: string | null;
  subscription_customer_id: string | null;
  billing_reason: Invoice['billingReason'];
  sequence: string;
  source_key: string | null;
  source: Invoice['source'];
  status: Invoice['status'];
  payment_status: Invoice['paymentStatus'];
  currency: string;
  period_start: Date | null;
  period_end: Date | null;
  payment_terms_days: number;
  due_date: Date | null;
  overdue: boolean;
  subtotal: number | string;
  total_discount: number | string;
  excess_credit: number | string;
  total_prepaid_credits_applied: number | string;
  total: number | string;
  pre_payment_credit_notes_amount: number | string;
  post_payment_credit_notes_amount: number | string;
  amount_due: number | string;
  amount_paid: number | string;
  amount_remaining: number | string;
  hosted_invoice_url: string | null;
  invoice_pdf_url: string | null;
  invoice_number: string | null;
  finalize_after: Date;
  frozen_at: Date | null;
  finalized_at: Date | null;
  voided_at: Date | null;
  refund_state: Invoice['refundState'];
  settle_state: Invoice['settleState'];
  threshold_returns?: Array<{ period_start: string; price_id: string; amount: number }> | null;
  threshold_returned_at?: Date | null;
  total_tax?: number | string;
  exclusive_tax?: number | string;
  tax_breakdown?: Array<{ tax_rate_id: string; code: string; country: string | null; region: string | null; percentage: string; taxable_amount: number; amount: number }>;
  reverse_charge?: boolean;
  tax_exempt_reason?: 'customer_exempt' | null;
  buyer_tax?: { tax_exempt: BuyerTax['taxExempt']; tax_ids: BuyerTax['taxIds']; address_country: string | null; address_state: string | null } | null;
  tax_status?: InvoiceTaxStatus;
  tax_attempts?: number;
  version: number;
  created_at: Date;
  updated_at: Date;
}

export interface LineRow {
  id: string;
  invoice_id: string;
  position: number;
  price_id: string | null;
  price_type: InvoiceLine['priceType'];
  meter_id: string | null;
  description: string;
  quantity: string;
  unit_amount: string;
  line_type: InvoiceLine['lineType'];
  amount: number | string;
  offset_amount: number | string;
  discount_amount: number | string;
  net_amount: number | string;
  credited_amount: number | string;
  proration_factor: string | null;
  prepaid_credits_applied: number | string;
  period_start: Date | null;
  period_end: Date | null;
  billing_period_start?: Date | null;
  tax_amount?: number | string;
  taxes?: Array<{ tax_rate_id: string; code: string; percentage: string; taxable_amount: number; amount: number }>;
  tax_behavior?: 'exclusive' | 'inclusive' | null;
}

export function lineFromRow(r: LineRow): InvoiceLine {
  return {
    id: r.id,
    position: r.position,
    priceId: r.price_id,
    priceType: r.price_type,
    meterId: r.meter_id,
    description: r.description,
    quantity: r.quantity,
    unitAmount: r.unit_amount,
    lineType: r.line_type,
    amount: Number(r.amount),
    offsetAmount: Number(r.offset_amount),
    discountAmount: Number(r.discount_amount),
    netAmount: Number(r.net_amount),
    creditedAmount: Number(r.credited_amount),
    prorationFactor: r.proration_factor,
    prepaidCreditsApplied: Number(r.prepaid_credits_applied),
    periodStart: r.period_start,
    periodEnd: r.period_end,
    ...(r.billing_period_start ? { billingPeriodStart: r.billing_period_start } : {}),
    taxAmount: Number(r.tax_amount ?? 0),
    taxes: (r.taxes ?? []).map((t) => ({ taxRateId: t.tax_rate_id, code: t.code, percentage: t.percentage, taxableAmount: Number(t.taxable_amount), amount: Number(t.amount) })),
    taxBehavior: r.tax_behavior ?? null,
  };
}

/** A row of `invoice_discounts`: one amount per (invoice, discount), replaced on recompute. */
export interface DiscountRow {
  invoice_id: string;
  discount_id: string;
  position: number;
  amount: number | string;
  /** The billed periods the discount covered on the invoice (migration 012). */
  periods?: Date[];
  /** A FIXED_AMOUNT discount's amount in each of `periods` (migration 021); null on older rows and other discounts. */
  period_amounts?: Array<number | string> | null;
}

export function discountFromRow(r: DiscountRow): DiscountAmount {
  return {
    discountId: r.discount_id,
    amount: Number(r.amount),
    ...(r.periods && r.periods.length > 0 ? { periods: r.periods } : {}),
    ...(r.period_amounts ? { periodAmounts: r.period_amounts.map(Number) } : {}),
  };
}

export function discountRows(invoiceId: string, discounts: DiscountAmount[]): DiscountRow[] {
  return discounts.map((d, position) => ({ invoice_id: invoiceId, discount_id: d.discountId, position, amount: d.amount, periods: d.periods ?? [], period_amounts: d.periodAmounts ?? null }));
}

export function fromRow(r: InvoiceRow, lines: InvoiceLine[], discounts: DiscountAmount[] = []): Invoice {
  return {
    id: r.id,
    tenantId: r.tenant_id,
    environmentId: r.environment_id,
    customerId: r.customer_id,
    subscriptionId: r.subscription_id,
    subscriptionCustomerId: r.subscription_customer_id,
    billingReason: r.billing_reason,
    sequence: r.sequence,
    sourceKey: r.source_key,
    source: r.source,
    status: r.status,
    paymentStatus: r.payment_status,
    currency: r.currency,
    periodStart: r.period_start,
    periodEnd: r.period_end,
    paymentTermsDays: r.payment_terms_days,
    dueDate: r.due_date,
    overdue: r.overdue,
    subtotal: Number(r.subtotal),
    totalDiscount: Number(r.total_discount),
    discounts,
    excessCredit: Number(r.excess_credit),
    totalPrepaidCreditsApplied: Number(r.total_prepaid_credits_applied),
    total: Number(r.total),
    prePaymentCreditNotesAmount: Number(r.pre_payment_credit_notes_amount),
    postPaymentCreditNotesAmount: Number(r.post_payment_credit_notes_amount),
    amountDue: Number(r.amount_due),
    amountPaid: Number(r.amount_paid),
    amountRemaining: Number(r.amount_remaining),
    hostedInvoiceUrl: r.hosted_invoice_url,
    invoicePdfUrl: r.invoice_pdf_url,
    invoiceNumber: r.invoice_number,
    finalizeAfter: r.finalize_after,
    frozenAt: r.frozen_at,
    finalizedAt: r.finalized_at,
    voidedAt: r.voided_at,
    refundState: r.refund_state,
    settleState: r.settle_state,
    thresholdReturns: (r.threshold_returns ?? []).map((t): ThresholdReturn => ({ periodStart: t.period_start, priceId: t.price_id, amount: Number(t.amount) })),
    thresholdReturnedAt: r.threshold_returned_at ?? null,
    totalTax: Number(r.total_tax ?? 0),
    exclusiveTax: Number(r.exclusive_tax ?? 0),
    taxBreakdown: (r.tax_breakdown ?? []).map(
      (t): TaxBreakdownLine => ({ taxRateId: t.tax_rate_id, code: t.code, country: t.country, region: t.region, percentage: t.percentage, taxableAmount: Number(t.taxable_amount), amount: Number(t.amount) }),
    ),
    reverseCharge: r.reverse_charge ?? false,
    taxExemptReason: r.tax_exempt_reason ?? null,
    buyerTax: r.buyer_tax ? { taxExempt: r.buyer_tax.tax_exempt, taxIds: r.buyer_tax.tax_ids, addressCountry: r.buyer_tax.address_country, addressState: r.buyer_tax.address_state } : null,
    taxStatus: r.tax_status ?? 'ok',
    taxAttempts: r.tax_attempts ?? 0,
    lines,
    version: r.version,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/** The columns a change may write. */
export function changeRow(i: Invoice) {
  return {
    status: i.status,
    payment_status: i.paymentStatus,
    due_date: i.dueDate,
    overdue: i.overdue,
    subtotal: i.subtotal,
    total_discount: i.totalDiscount,
    excess_credit: i.excessCredit,
    total_prepaid_credits_applied: i.totalPrepaidCreditsApplied,
    total: i.total,
    pre_payment_credit_notes_amount: i.prePaymentCreditNotesAmount,
    post_payment_credit_notes_amount: i.postPaymentCreditNotesAmount,
    amount_due: i.amountDue,
    amount_paid: i.amountPaid,
    amount_remaining: i.amountRemaining,
    hosted_invoice_url: i.hostedInvoiceUrl,
    invoice_pdf_url: i.invoicePdfUrl,
    invoice_number: i.invoiceNumber,
    finalize_after: i.finalizeAfter,
    frozen_at: i.frozenAt,
    finalized_at: i.finalizedAt,
    voided_at: i.voidedAt,
    refund_state: i.refundState,
    settle_state: i.settleState,
    threshold_returns: JSON.stringify((i.thresholdReturns ?? []).map((t) => ({ period_start: t.periodStart, price_id: t.priceId, amount: t.amount }))),
    ...taxColumns(i),
    updated_at: i.updatedAt,
  };
}

/** An invoice's step (6) columns (docs/api/taxes.md#invoices-bearing-tax); the jsonb ones as JSON text. */
function taxColumns(i: Invoice) {
  const b = i.buyerTax ?? null;
  return {
    total_tax: i.totalTax ?? 0,
    exclusive_tax: i.exclusiveTax ?? 0,
    tax_breakdown: JSON.stringify(
      (i.taxBreakdown ?? []).map((t) => ({ tax_rate_id: t.taxRateId, code: t.code, country: t.country, region: t.region, percentage: t.percentage, taxable_amount: t.taxableAmount, amount: t.amount })),
    ),
    reverse_charge: i.reverseCharge ?? false,
    tax_exempt_reason: i.taxExemptReason ?? null,
    buyer_tax: b && JSON.stringify({ tax_exempt: b.taxExempt, tax_ids: b.taxIds, address_country: b.addressCountry, address_state: b.addressState }),
    tax_status: i.taxStatus ?? 'ok',
    tax_attempts: i.taxAttempts ?? 0,
  };
}

export function lineRow(invoiceId: string, l: InvoiceLine) {
  return {
    id: l.id,
    invoice_id: invoiceId,
    position: l.position,
    price_id: l.priceId,
    price_type: l.priceType,
    meter_id: l.meterId,
    description: l.description,
    quantity: l.quantity,
    unit_amount: l.unitAmount,
    line_type: l.lineType,
    amount: l.amount,
    offset_amount: l.offsetAmount,
    discount_amount: l.discountAmount,
    net_amount: l.netAmount,
    credited_amount: l.creditedAmount,
    proration_factor: l.prorationFactor,
    prepaid_credits_applied: l.prepaidCreditsApplied,
    period_start: l.periodStart,
    period_end: l.periodEnd,
    billing_period_start: l.billingPeriodStart ?? null,
    tax_amount: l.taxAmount ?? 0,
    taxes: JSON.stringify((l.taxes ?? []).map((t) => ({ tax_rate_id: t.taxRateId, code: t.code, percentage: t.percentage, taxable_amount: t.taxableAmount, amount: t.amount }))),
    tax_behavior: l.taxBehavior ?? null,
  };
}

/** Rows grouped by their invoice, mapped, in the order read. */
export function groupBy<R extends { invoice_id: string }, T>(rows: R[], map: (r: R) => T): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const r of rows) {
    const list = out.get(r.invoice_id) ?? [];
    list.push(map(r));
    out.set(r.invoice_id, list);
  }
  return out;
}
