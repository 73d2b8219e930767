import type { BillingReason, InvoicePaymentStatus, InvoiceStatus, WebhookEventName } from '@billstream/contracts';
import { sumAmounts } from '../pricing';

export type LinePriceType = 'FIXED' | 'USAGE';

/** One invoice line: exact quantity and unit amount (decimal strings), amount rounded once to minor units. */
export interface InvoiceLine {
  id: string;
  position: number;
  priceId: string | null;
  priceType: LinePriceType;
  meterId: string | null;
  description: string;
  quantity: string;
  unitAmount: string;
  amount: number;
  /** Only on a prorated FIXED line: part / whole of the period, 12 decimals, half up (BILLING.md, Prices); amount = unit amount x factor, rounded once. */
  prorationFactor: string | null;
  prepaidCreditsApplied: number;
  periodStart: Date | null;
  periodEnd: Date | null;
}

/** What an invoice was made from when it was not a subscription period (an invoiced top-up). */
export interface InvoiceSource {
  wallet_id: string;
  transaction_id: string;
}

export interface Invoice {
  id: string;
  tenantId: string;
  environmentId: string;
  customerId: string;
  subscriptionId: string | null;
  billingReason: BillingReason;
  sourceKey: string | null;
  source: InvoiceSource | null;
  status: InvoiceStatus;
  paymentStatus: InvoicePaymentStatus;
  currency: string;
  periodStart: Date | null;
  periodEnd: Date | null;
  paymentTermsDays: number;
  dueDate: Date | null;
  overdue: boolean;
  subtotal: number;
  totalPrepaidCreditsApplied: number;
  total: number;
  amountDue: number;
  amountPaid: number;
  amountRemaining: number;
  invoiceNumber: string | null;
  finalizeAfter: Date;
  frozenAt: Date | null;
  finalizedAt: Date | null;
  voidedAt: Date | null;
  refundState: 'pending' | 'done' | null;
  /** An invoiced top-up paid in full: its pending wallet credit is to be settled COMPLETED (`pending`), or was (`done`). */
  settleState: 'pending' | 'done' | null;
  lines: InvoiceLine[];
  version: number;
  createdAt: Date;
  updatedAt: Date;
}

export const INVOICE_EVENTS = {
  drafted: 'invoice.create.drafted',
  finalized: 'invoice.update.finalized',
  payment: 'invoice.update.payment',
  voided: 'invoice.update.voided',
  updated: 'invoice.update',
  overdue: 'invoice.payment.overdue',
} as const satisfies Record<string, WebhookEventName>;
export type InvoiceEventType = (typeof INVOICE_EVENTS)[keyof typeof INVOICE_EVENTS];

export interface InvoiceListQuery {
  customerId?: string;
  subscriptionId?: string;
  status?: InvoiceStatus;
  limit: number;
  offset: number;
}

/** Sums of the lines; amounts after credits and payments. Pure: the totals always add up. */
export function totalsOf(lines: Pick<InvoiceLine, 'amount' | 'prepaidCreditsApplied'>[], amountPaid: number) {
  const subtotal = sumAmounts(lines);
  const credits = sumAmounts(lines.map((l) => ({ amount: l.prepaidCreditsApplied })));
  const total = subtotal - credits;
  return { subtotal, totalPrepaidCreditsApplied: credits, total, amountDue: total, amountPaid, amountRemaining: total - amountPaid };
}

export function paymentStatusOf(amountDue: number, amountPaid: number): InvoicePaymentStatus {
  if (amountPaid >= amountDue) return 'succeeded';
  return amountPaid > 0 ? 'partially_paid' : 'pending';
}
