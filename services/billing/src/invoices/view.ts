import type { InvoiceResponse } from '@billstream/contracts';
import type { Invoice, InvoiceLine } from './domain';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** A line as the API shows it; `proration_factor` only on a prorated line (BILLING.md: "whole periods have none"). */
export function toLineView(l: InvoiceLine): InvoiceResponse['line_items'][number] {
  const view: InvoiceResponse['line_items'][number] = {
    id: l.id,
    price_id: l.priceId,
    price_type: l.priceType,
    meter_id: l.meterId,
    description: l.description,
    quantity: l.quantity,
    unit_amount: l.unitAmount,
    amount: l.amount,
    prepaid_credits_applied: l.prepaidCreditsApplied,
    period_start: iso(l.periodStart),
    period_end: iso(l.periodEnd),
  };
  if (l.prorationFactor !== null) view.proration_factor = l.prorationFactor;
  return view;
}

/** The public JSON of an invoice: responses and `payload.invoice` of its events. */
export function toInvoiceView(i: Invoice): InvoiceResponse {
  return {
    id: i.id,
    invoice_number: i.invoiceNumber,
    customer_id: i.customerId,
    subscription_id: i.subscriptionId,
    billing_reason: i.billingReason,
    status: i.status,
    payment_status: i.paymentStatus,
    currency: i.currency,
    period_start: iso(i.periodStart),
    period_end: iso(i.periodEnd),
    due_date: iso(i.dueDate),
    overdue: i.overdue,
    subtotal: i.subtotal,
    total_prepaid_credits_applied: i.totalPrepaidCreditsApplied,
    total: i.total,
    amount_due: i.amountDue,
    amount_paid: i.amountPaid,
    amount_remaining: i.amountRemaining,
    line_items: i.lines.map(toLineView),
    finalized_at: iso(i.finalizedAt),
    voided_at: iso(i.voidedAt),
    created_at: i.createdAt.toISOString(),
    updated_at: i.updatedAt.toISOString(),
    tenant_id: i.tenantId,
    environment_id: i.environmentId,
  };
}
