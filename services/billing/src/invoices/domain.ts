import type { BillingReason, InvoiceLineType, InvoicePaymentStatus, InvoiceStatus, InvoiceTaxStatus, WebhookEventName } from '@billstream/contracts';
import { invoiceArithmetic, invoiceTotals, type DiscountAmount, type DiscountInput, type InvoiceTotals, type LineRateTax, type TaxBehavior } from '../invoice-arithmetic';
import { sumAmounts } from '@billstream/pricing';

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
  /** CHARGE unless a plan change, a threshold or a commitment made it (docs/api/billing.md#invoice-arithmetic). */
  lineType: InvoiceLineType;
  /** As priced, rounded once; negative on PRORATION_CREDIT and THRESHOLD_DEDUCTION lines. */
  amount: number;
  /** Taken off by deductions and proration credits (ADR 0038). */
  offsetAmount: number;
  /** This line's part of the invoice's discounts. */
  discountAmount: number;
  /** amount − offset − discount, >= 0 (0 on negative lines): what credits, payments and credit notes work on. */
  netAmount: number;
  /** Taken back of netAmount by credit notes and later proration credits. */
  creditedAmount: number;
  /** Only on a prorated FIXED line: part / whole of the period, 12 decimals, half up (docs/api/billing.md#lines-and-amounts); amount = unit amount x factor, rounded once. */
  prorationFactor: string | null;
  prepaidCreditsApplied: number;
  periodStart: Date | null;
  periodEnd: Date | null;
  /** The billing period the line belongs to when its window is a part of it (a plan change's); absent or null: `periodStart`'s. */
  billingPeriodStart?: Date | null;
  /** Step (6), docs/api/taxes.md#arithmetic: Σ of `taxes`; absent: 0 (an untaxed line). */
  taxAmount?: number;
  /** Per rate the line bears; absent: none. */
  taxes?: LineRateTax[];
  /** Whether net_amount holds the tax (inclusive) or the tax adds to it (exclusive); null or absent when untaxed. */
  taxBehavior?: TaxBehavior | null;
}

/** One rate of an invoice's tax breakdown: what its lines bore of it. */
export interface TaxBreakdownLine {
  taxRateId: string;
  code: string;
  country: string | null;
  region: string | null;
  percentage: string;
  taxableAmount: number;
  amount: number;
}

/** The buyer's tax identity as the invoice bore it (docs/api/taxes.md#invoices-bearing-tax). */
export interface BuyerTax {
  taxExempt: 'none' | 'exempt' | 'reverse';
  taxIds: Array<{ type: string; value: string }>;
  addressCountry: string | null;
  addressState: string | null;
}

/** What a line owes before credits: its net amount, plus its tax when exclusive (credits pay both). */
export function owedOf(l: Pick<InvoiceLine, 'netAmount' | 'taxAmount' | 'taxBehavior'>): number {
  return l.netAmount + (l.taxBehavior === 'exclusive' ? (l.taxAmount ?? 0) : 0);
}

/** The start of the billing period a line belongs to (discounts and commitments count periods by it). */
export function billingPeriodOf(l: Pick<InvoiceLine, 'periodStart' | 'billingPeriodStart'>): Date | null {
  return l.billingPeriodStart ?? l.periodStart;
}

/** A CHARGE line's money before the arithmetic: nothing offset, discounted or credited. */
export function chargeLine(amount: number): Pick<InvoiceLine, 'lineType' | 'amount' | 'offsetAmount' | 'discountAmount' | 'netAmount' | 'creditedAmount'> {
  return { lineType: 'CHARGE', amount, offsetAmount: 0, discountAmount: 0, netAmount: amount, creditedAmount: 0 };
}

/** What an invoice was made from when it was not a subscription period (an invoiced top-up). */
export interface InvoiceSource {
  wallet_id: string;
  transaction_id: string;
}

/** A price's amount that threshold invoices of a billing period billed beyond its usage now (minor units, > 0). */
export interface ThresholdReturn {
  /** The billing period's start, ISO. */
  periodStart: string;
  priceId: string;
  amount: number;
}

export interface Invoice {
  id: string;
  tenantId: string;
  environmentId: string;
  customerId: string;
  subscriptionId: string | null;
  /** The subscription's customer (null without a subscription). */
  subscriptionCustomerId: string | null;
  billingReason: BillingReason;
  /** Tells apart invoices of one subscription, period start and reason: a change id, a threshold index, else ''. */
  sequence: string;
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
  totalDiscount: number;
  /** One amount per discount, in the order they were applied. */
  discounts: DiscountAmount[];
  excessCredit: number;
  totalPrepaidCreditsApplied: number;
  total: number;
  prePaymentCreditNotesAmount: number;
  postPaymentCreditNotesAmount: number;
  amountDue: number;
  amountPaid: number;
  amountRemaining: number;
  hostedInvoiceUrl: string | null;
  invoicePdfUrl: string | null;
  invoiceNumber: string | null;
  finalizeAfter: Date;
  frozenAt: Date | null;
  finalizedAt: Date | null;
  voidedAt: Date | null;
  refundState: 'pending' | 'done' | null;
  /** An invoiced top-up paid in full: its pending wallet credit is to be settled COMPLETED (`pending`), or was (`done`). */
  settleState: 'pending' | 'done' | null;
  /**
   * What threshold invoices of the period billed of a price beyond the usage this (closing)
   * invoice found: a SUM that fell. Returned by credit notes on them once it is finalized
   * (ADR 0046); absent or [] without.
   */
  thresholdReturns?: ThresholdReturn[];
  /** When those credit notes were written (null while owed or without returns). */
  thresholdReturnedAt?: Date | null;
  lines: InvoiceLine[];
  /** Σ line tax (docs/api/taxes.md#invoices-bearing-tax); absent: 0. */
  totalTax?: number;
  /** The tax of exclusive lines, which adds to `total` (inclusive tax is inside the lines); absent: 0. */
  exclusiveTax?: number;
  taxBreakdown?: TaxBreakdownLine[];
  reverseCharge?: boolean;
  taxExemptReason?: 'customer_exempt' | null;
  /** The buyer's tax identity it was taxed with; null: untaxed (taxes off). */
  buyerTax?: BuyerTax | null;
  /** Whether it bears its tax yet (docs/api/taxes.md#http-provider): `pending` until the HTTP provider answered, `failed` after a failed call; absent: ok. */
  taxStatus?: InvoiceTaxStatus;
  /** The HTTP provider's failed calls in a row for this draft (the retry's backoff); absent: 0. */
  taxAttempts?: number;
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
  /** Of any of these customers (a customer, with its descendants under include_children). */
  customerIds?: string[];
  subscriptionId?: string;
  status?: InvoiceStatus;
  limit: number;
  offset: number;
}

/** The money of an invoice: its totals and its discounts' amounts. */
export type InvoiceMoney = InvoiceTotals & { discounts: DiscountAmount[] };

/**
 * A new or repriced draft's money (docs/api/billing.md#invoice-arithmetic, through `invoice-arithmetic`): the
 * lines with their offsets, discounts and net amounts, and the totals before any credit,
 * credit note or payment. Pure.
 */
export function priceInvoice(lines: InvoiceLine[], discounts: readonly DiscountInput[] = []): InvoiceMoney & { lines: InvoiceLine[] } & typeof UNTAXED {
  const a = invoiceArithmetic({ lines, discounts });
  // Untaxed until step (6) taxes it (`taxed`): a line priced again drops what it bore before.
  const priced = lines.map((l, i) => ({ ...l, ...a.lines[i]!, prepaidCreditsApplied: 0, taxAmount: 0, taxes: [], taxBehavior: null }));
  return { ...settleInvoice({ ...a, prePaymentCreditNotesAmount: 0 }, priced, 0), discounts: a.discounts, lines: priced, ...UNTAXED };
}

/** An invoice's tax fields before step (6), or with taxes off. */
export const UNTAXED = { totalTax: 0, exclusiveTax: 0, taxBreakdown: [] as TaxBreakdownLine[], reverseCharge: false, taxExemptReason: null as 'customer_exempt' | null, buyerTax: null as BuyerTax | null, taxStatus: 'ok' as InvoiceTaxStatus };

/**
 * The totals of a priced invoice after the credits on its lines (each at most the line's net
 * amount), its pre-payment credit notes and what was paid. Pure: the totals always add up.
 */
export function settleInvoice(
  i: Pick<Invoice, 'subtotal' | 'totalDiscount' | 'excessCredit' | 'prePaymentCreditNotesAmount' | 'exclusiveTax'>,
  lines: ReadonlyArray<Pick<InvoiceLine, 'id' | 'netAmount' | 'prepaidCreditsApplied' | 'taxAmount' | 'taxBehavior'>>,
  amountPaid: number,
): InvoiceTotals {
  for (const l of lines) {
    if (l.prepaidCreditsApplied < 0 || l.prepaidCreditsApplied > owedOf(l)) throw new Error(`line ${l.id}: credits ${l.prepaidCreditsApplied} applied to a net amount of ${l.netAmount} (owing ${owedOf(l)} with its exclusive tax)`);
  }
  const totalPrepaidCreditsApplied = sumAmounts(lines.map((l) => ({ amount: l.prepaidCreditsApplied })));
  return invoiceTotals(i, { totalPrepaidCreditsApplied, prePaymentCreditNotesAmount: i.prePaymentCreditNotesAmount, amountPaid });
}

/**
 * The lines as the wallets are offered them (allocation, the upcoming invoice's estimate): what
 * they may pay of each is what it owes, its net amount plus its exclusive tax (credits come
 * after tax, docs/api/taxes.md#invoices-bearing-tax).
 */
export function netLines(i: Pick<Invoice, 'lines'>): Array<{ id: string; price_type: LinePriceType; amount: number }> {
  return i.lines.map((l) => ({ id: l.id, price_type: l.priceType, amount: owedOf(l) }));
}

export function paymentStatusOf(amountDue: number, amountPaid: number): InvoicePaymentStatus {
  if (amountPaid >= amountDue) return 'succeeded';
  return amountPaid > 0 ? 'partially_paid' : 'pending';
}
