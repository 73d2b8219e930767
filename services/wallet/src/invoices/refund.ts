import type { EventContext } from '@billstream/outbox';
import { credit } from '../ledger/credit';
import type { InvoiceDeps } from './deps';
import { debitKeys, type InvoiceDebit, type Refund } from './domain';

/**
 * Refunds a voided invoice (ADR 0016, "Void refunds through a tombstone"): in one database
 * transaction every debit of the invoice not refunded yet is credited back (CREDIT_NOTE) to its
 * wallet, or skipped when the wallet is closed, and the invoice is tombstoned so that a later
 * allocation or payment answers `voided`. A repeated call credits nothing more and answers
 * every refund of the invoice again.
 */
export async function refundInvoice(deps: InvoiceDeps, ctx: EventContext, invoiceId: string): Promise<Refund[]> {
  const { result } = await deps.ledger.transaction(async (trx) => {
    await deps.invoices.lock(trx, ctx, invoiceId);
    const debits = await deps.invoices.debitsOf(trx, ctx, invoiceId);
    const open = debits.filter((d) => d.refundedAt === null);
    const walletIds = [...new Set(open.map((d) => d.walletId))];
    const { events } = await deps.ledger.changeManyIn(
      trx,
      walletIds.map((walletId) => ({ ctx, walletId })),
      async (changes) => {
        const now = deps.ledger.clock();
        for (const d of open) {
          const change = changes.find((c) => c?.wallet.id === d.walletId);
          d.refundedAt = now;
          if (!change || change.wallet.walletStatus === 'closed') {
            d.refundSkipped = true;
            continue;
          }
          d.refundTransactionId = credit(change, {
            credits: d.credits,
            reason: 'CREDIT_NOTE',
            pending: false,
            expiryDate: null,
            priority: null,
            description: `Refund of invoice ${invoiceId} (debit ${d.transactionId})`,
            idempotencyKey: debitKeys.refund(d.transactionId),
            requestHash: null,
          }).id;
        }
      },
    );
    await deps.invoices.markRefunded(trx, open);
    await deps.invoices.tombstone(trx, ctx, invoiceId, deps.ledger.clock());
    return { result: debits.map(refundOf), events };
  });
  return result;
}

function refundOf(d: InvoiceDebit): Refund {
  return {
    walletId: d.walletId,
    debitTransactionId: d.transactionId,
    transactionId: d.refundTransactionId,
    credits: d.credits,
    skipped: d.refundSkipped,
  };
}
