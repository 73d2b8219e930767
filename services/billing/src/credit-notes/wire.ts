import type { CreateCreditNoteBody } from '@billstream/contracts';
import type { NewCreditNote } from './domain';

/** `POST /v1/credit-notes`'s body as the service takes it (ADR 0063). */
export function newCreditNoteOf(b: CreateCreditNoteBody): NewCreditNote {
  return {
    invoiceId: b.invoice_id,
    reason: b.reason,
    ...(b.memo !== undefined ? { memo: b.memo } : {}),
    ...(b.lines ? { lines: b.lines.map((l) => ({ invoiceLineItemId: l.invoice_line_item_id, amount: l.amount })) } : {}),
    ...(b.amount !== undefined ? { amount: b.amount } : {}),
    ...(b.refund !== undefined ? { refund: b.refund } : {}),
    ...(b.idempotency_key !== undefined ? { idempotencyKey: b.idempotency_key } : {}),
    ...(b.metadata !== undefined ? { metadata: b.metadata } : {}),
  };
}
