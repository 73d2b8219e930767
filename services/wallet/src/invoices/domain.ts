import type { INVOICE_LINE_PRICE_TYPES } from '@billstream/contracts';
import type { Decimal } from 'decimal.js';

/** Invoice money is in minor units of the invoice currency: integers, held as exact decimals here. */
export type LinePriceType = (typeof INVOICE_LINE_PRICE_TYPES)[number];

export interface InvoiceLine {
  id: string;
  priceType: LinePriceType;
  amount: Decimal;
}

/** The currency of an invoice: its code and its minor digits (usd 2, jpy 0, kwd 3; `exponent` on the wire). */
export interface InvoiceMoney {
  customerId: string;
  currency: string;
  minorDigits: number;
}

export interface AllocationRequest extends InvoiceMoney {
  lines: InvoiceLine[];
}

export interface PaymentRequest extends InvoiceMoney {
  paymentId: string;
  walletId: string;
  amount: Decimal;
}

/** One debit a wallet made for an invoice. */
export interface DebitPart {
  walletId: string;
  transactionId: string;
  credits: Decimal;
  /** Minor units it pays. */
  amount: Decimal;
}

export interface LineApplication {
  id: string;
  amount: Decimal;
}

export type AllocationStatus = 'allocated' | 'voided';

export interface Allocation {
  invoiceId: string;
  status: AllocationStatus;
  prepaid: (DebitPart & { lines: LineApplication[] }) | null;
  postpaid: DebitPart | null;
}

/** The wallet's record of an invoice: its allocation, if made, and whether it was voided (the tombstone). */
export interface InvoiceRecord {
  invoiceId: string;
  status: AllocationStatus;
  /** Null when the invoice was voided before any allocation. */
  allocation: Pick<Allocation, 'prepaid' | 'postpaid'> | null;
  requestHash: string | null;
}

/** A row of `invoice_debits`: a debit made for an invoice, and its refund once the invoice is voided. */
export interface InvoiceDebit extends DebitPart {
  tenantId: string;
  environmentId: string;
  invoiceId: string;
  /** Unique per tenant and environment: `invoice:{id}`, `invoice-payment:{id}`, `payment:{payment_id}`. */
  key: string;
  requestHash: string | null;
  refundTransactionId: string | null;
  refundedAt: Date | null;
  /** The wallet was closed when the invoice was voided: nothing was credited back. */
  refundSkipped: boolean;
  createdAt: Date;
}

export type PaymentResult = { status: 'paid'; transactionId: string; credits: Decimal } | { status: 'voided' };

export interface Refund {
  walletId: string;
  debitTransactionId: string;
  transactionId: string | null;
  credits: Decimal;
  skipped: boolean;
}

/** The idempotency keys of the debits an invoice can cause (also the ledger entries' keys). */
export const debitKeys = {
  prepaid: (invoiceId: string) => `invoice:${invoiceId}`,
  postpaid: (invoiceId: string) => `invoice-payment:${invoiceId}`,
  payment: (paymentId: string) => `payment:${paymentId}`,
  refund: (debitTransactionId: string) => `refund:${debitTransactionId}`,
};
