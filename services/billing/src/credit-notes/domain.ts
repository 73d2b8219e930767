import type { CreditNoteOrigin, CreditNoteReason, CreditNoteRefund, CreditNoteRefundStatus, CreditNoteStatus, WebhookEventName } from '@billstream/contracts';

/** What one invoice line gives back in a credit note (minor units, > 0). */
export interface CreditNoteLine {
  id: string;
  invoiceLineItemId: string;
  position: number;
  /** In the invoice line's terms (tax included when the line is inclusive). */
  amount: number;
  /** What it returns of the line's tax, per rate, cumulatively (docs/api/taxes.md#arithmetic); absent: none. */
  taxAmount?: number;
  taxes?: Array<{ taxRateId: string; amount: number }>;
}

/**
 * A credit note (docs/api/credit-notes.md, ADR 0041): `total` = `prePaymentAmount` (taken off
 * what was due) + `walletAmount` (back to the wallets that paid) + `refundAmount` (money paid,
 * refunded to the PRE_PAID wallet or outside Billstream); `total` = `amount` (Σ lines, in their
 * lines' terms) + the exclusive part of `taxAmount` (docs/api/taxes.md#arithmetic).
 */
export interface CreditNote {
  id: string;
  tenantId: string;
  environmentId: string;
  number: string;
  invoiceId: string;
  customerId: string;
  currency: string;
  reason: CreditNoteReason;
  memo: string | null;
  amount: number;
  /** Σ its lines' tax. */
  taxAmount: number;
  /** What it gives back in all. */
  total: number;
  refund: CreditNoteRefund;
  status: CreditNoteStatus;
  origin: CreditNoteOrigin;
  prePaymentAmount: number;
  walletAmount: number;
  refundAmount: number;
  refundStatus: CreditNoteRefundStatus;
  walletTransactionId: string | null;
  idempotencyKey: string | null;
  requestHash: string | null;
  metadata: Record<string, string>;
  voidedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
  lines: CreditNoteLine[];
}

export interface CreditNoteListQuery {
  invoiceId?: string;
  /** Of any of these customers (a customer, with its descendants under include_children). */
  customerIds?: string[];
  status?: CreditNoteStatus;
  limit: number;
  offset: number;
}

/** What goes to the customer's PRE_PAID wallet: the wallet part always, the refund when WALLET. */
export function walletCreditOf(n: Pick<CreditNote, 'walletAmount' | 'refundAmount' | 'refund'>): number {
  return n.walletAmount + (n.refund === 'WALLET' ? n.refundAmount : 0);
}

/** `{prefix}-{YYYYMM of the issue instant, UTC}-{n, 5 digits at least}`, as invoice numbers. */
export function creditNoteNumber(prefix: string, at: Date, n: number): string {
  const month = `${at.getUTCFullYear()}${String(at.getUTCMonth() + 1).padStart(2, '0')}`;
  return `${prefix}-${month}-${String(n).padStart(5, '0')}`;
}

export const CREDIT_NOTE_EVENTS = { created: 'credit_note.created', updated: 'credit_note.updated' } as const satisfies Record<string, WebhookEventName>;

/** A credit note as asked (`POST /v1/credit-notes`): the service's input (ADR 0063). Exactly one of `lines` and `amount`. */
export interface NewCreditNote {
  invoiceId: string;
  reason: CreditNoteReason;
  memo?: string;
  /** What each line gives back. */
  lines?: Array<{ invoiceLineItemId: string; amount: number }>;
  /** Or an amount, spread by what each line can take. */
  amount?: number;
  refund?: CreditNoteRefund;
  idempotencyKey?: string;
  metadata?: Record<string, string>;
}
