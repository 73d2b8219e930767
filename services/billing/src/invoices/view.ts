import type { InvoiceResponse } from '@billstream/contracts';
import type { Invoice, InvoiceLine } from './domain';
import { availableActions } from './lifecycle';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** A line as the API shows it; `proration_factor` only on a prorated line (docs/api/billing.md#lines-and-amounts: a whole period's line has none). */
export function toLineView(l: InvoiceLine): InvoiceResponse['line_items'][number] {
  const view: InvoiceResponse['line_items'][number] = {
    id: l.id,
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
    prepaid_credits_applied: l.prepaidCreditsApplied,
    period_start: iso(l.periodStart),
    period_end: iso(l.periodEnd),
    tax_amount: l.taxAmount ?? 0,
    taxes: (l.taxes ?? []).map((t) => ({ tax_rate_id: t.taxRateId, code: t.code, percentage: t.percentage, taxable_amount: t.taxableAmount, amount: t.amount })),
    tax_behavior: l.taxBehavior ?? null,
  };
  if (l.prorationFactor !== null) view.proration_factor = l.prorationFactor;
  return view;
}

/** An invoice's tax fields as the API shows them (docs/api/taxes.md#invoices-bearing-tax). */
function taxView(i: Invoice): Pick<InvoiceResponse, 'total_tax' | 'total_excluding_tax' | 'tax_breakdown' | 'reverse_charge' | 'tax_exempt_reason' | 'buyer_tax' | 'tax_status'> {
  const totalTax = i.totalTax ?? 0;
  const b = i.buyerTax ?? null;
  return {
    total_tax: totalTax,
    total_excluding_tax: i.subtotal - i.totalDiscount + i.excessCredit - (totalTax - (i.exclusiveTax ?? 0)),
    tax_breakdown: (i.taxBreakdown ?? []).map((t) => ({ tax_rate_id: t.taxRateId, code: t.code, country: t.country, region: t.region, percentage: t.percentage, taxable_amount: t.taxableAmount, amount: t.amount })),
    reverse_charge: i.reverseCharge ?? false,
    tax_exempt_reason: i.taxExemptReason ?? null,
    tax_status: i.taxStatus ?? 'ok',
    buyer_tax: b && { tax_exempt: b.taxExempt, tax_ids: b.taxIds, address_country: b.addressCountry, address_state: b.addressState },
  };
}

/** The public JSON of an invoice: responses and `payload.invoice` of its events. */
export function toInvoiceView(i: Invoice): InvoiceResponse {
  return {
    id: i.id,
    invoice_number: i.invoiceNumber,
    customer_id: i.customerId,
    subscription_id: i.subscriptionId,
    subscription_customer_id: i.subscriptionCustomerId,
    billing_reason: i.billingReason,
    status: i.status,
    payment_status: i.paymentStatus,
    currency: i.currency,
    period_start: iso(i.periodStart),
    period_end: iso(i.periodEnd),
    due_date: iso(i.dueDate),
    overdue: i.overdue,
    subtotal: i.subtotal,
    total_discount: i.totalDiscount,
    discounts: i.discounts.map((d) => ({ discount_id: d.discountId, amount: d.amount })),
    excess_credit: i.excessCredit,
    total_prepaid_credits_applied: i.totalPrepaidCreditsApplied,
    total: i.total,
    ...taxView(i),
    pre_payment_credit_notes_amount: i.prePaymentCreditNotesAmount,
    post_payment_credit_notes_amount: i.postPaymentCreditNotesAmount,
    amount_due: i.amountDue,
    amount_paid: i.amountPaid,
    amount_remaining: i.amountRemaining,
    hosted_invoice_url: i.hostedInvoiceUrl,
    invoice_pdf_url: i.invoicePdfUrl,
    line_items: i.lines.map(toLineView),
    available_actions: availableActions(i),
    finalized_at: iso(i.finalizedAt),
    voided_at: iso(i.voidedAt),
    created_at: i.createdAt.toISOString(),
    updated_at: i.updatedAt.toISOString(),
    tenant_id: i.tenantId,
    environment_id: i.environmentId,
  };
}
