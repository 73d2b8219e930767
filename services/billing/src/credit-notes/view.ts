import type { creditNoteSchema } from '@billstream/contracts';
import type { z } from 'zod';
import type { CreditNote } from './domain';

export function toCreditNoteView(n: CreditNote): z.output<typeof creditNoteSchema> {
  return {
    id: n.id,
    credit_note_number: n.number,
    invoice_id: n.invoiceId,
    customer_id: n.customerId,
    currency: n.currency,
    reason: n.reason,
    memo: n.memo,
    amount: n.amount,
    tax_amount: n.taxAmount,
    total: n.total,
    lines: n.lines.map((l) => ({
      id: l.id,
      invoice_line_item_id: l.invoiceLineItemId,
      amount: l.amount,
      tax_amount: l.taxAmount ?? 0,
      taxes: (l.taxes ?? []).map((t) => ({ tax_rate_id: t.taxRateId, amount: t.amount })),
    })),
    refund: n.refund,
    status: n.status,
    origin: n.origin,
    pre_payment_amount: n.prePaymentAmount,
    wallet_amount: n.walletAmount,
    refund_amount: n.refundAmount,
    refund_status: n.refundStatus,
    wallet_transaction_id: n.walletTransactionId,
    idempotency_key: n.idempotencyKey,
    metadata: n.metadata,
    voided_at: n.voidedAt ? n.voidedAt.toISOString() : null,
    created_at: n.createdAt.toISOString(),
    updated_at: n.updatedAt.toISOString(),
    tenant_id: n.tenantId,
    environment_id: n.environmentId,
  };
}
