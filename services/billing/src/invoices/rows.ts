import type { Invoice, InvoiceLine } from './domain';

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
  billing_reason: Invoice['billingReason'];
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
  total_prepaid_credits_applied: number | string;
  total: number | string;
  amount_due: number | string;
  amount_paid: number | string;
  amount_remaining: number | string;
  invoice_number: string | null;
  finalize_after: Date;
  frozen_at: Date | null;
  finalized_at: Date | null;
  voided_at: Date | null;
  refund_state: Invoice['refundState'];
  settle_state: Invoice['settleState'];
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
  amount: number | string;
  proration_factor: string | null;
  prepaid_credits_applied: number | string;
  period_start: Date | null;
  period_end: Date | null;
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
    amount: Number(r.amount),
    prorationFactor: r.proration_factor,
    prepaidCreditsApplied: Number(r.prepaid_credits_applied),
    periodStart: r.period_start,
    periodEnd: r.period_end,
  };
}

export function fromRow(r: InvoiceRow, lines: InvoiceLine[]): Invoice {
  return {
    id: r.id,
    tenantId: r.tenant_id,
    environmentId: r.environment_id,
    customerId: r.customer_id,
    subscriptionId: r.subscription_id,
    billingReason: r.billing_reason,
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
    totalPrepaidCreditsApplied: Number(r.total_prepaid_credits_applied),
    total: Number(r.total),
    amountDue: Number(r.amount_due),
    amountPaid: Number(r.amount_paid),
    amountRemaining: Number(r.amount_remaining),
    invoiceNumber: r.invoice_number,
    finalizeAfter: r.finalize_after,
    frozenAt: r.frozen_at,
    finalizedAt: r.finalized_at,
    voidedAt: r.voided_at,
    refundState: r.refund_state,
    settleState: r.settle_state,
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
    total_prepaid_credits_applied: i.totalPrepaidCreditsApplied,
    total: i.total,
    amount_due: i.amountDue,
    amount_paid: i.amountPaid,
    amount_remaining: i.amountRemaining,
    invoice_number: i.invoiceNumber,
    finalize_after: i.finalizeAfter,
    frozen_at: i.frozenAt,
    finalized_at: i.finalizedAt,
    voided_at: i.voidedAt,
    refund_state: i.refundState,
    settle_state: i.settleState,
    updated_at: i.updatedAt,
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
    amount: l.amount,
    proration_factor: l.prorationFactor,
    prepaid_credits_applied: l.prepaidCreditsApplied,
    period_start: l.periodStart,
    period_end: l.periodEnd,
  };
}
