import { IdempotencyConflictError, NotFoundError, ValidationError } from '@billstream/errors';
import { toDecimalString } from '@billstream/money';
import type { EventContext } from '@billstream/outbox';
import { requestHash } from '../entries/idempotency';
import type { WalletChange } from '../ledger/change';
import { debit } from '../ledger/debit';
import { invoiceDebit } from './allocate';
import type { InvoiceDeps } from './deps';
import { debitKeys, type InvoiceDebit, type PaymentRequest, type PaymentResult } from './domain';
import { creditsFor, minorPerCredit, worthInMinor } from './money';

/**
 * A credits payment of an invoice (ADR 0016, "CREDITS payments"): the wallet is debited the
 * credits worth `amount` minor units, once per payment id. A voided invoice takes no payment.
 */
export async function payInvoice(deps: InvoiceDeps, ctx: EventContext, invoiceId: string, request: PaymentRequest): Promise<PaymentResult> {
  // Over the wire names (`exponent`): hashes stored by earlier versions keep matching.
  const hash = requestHash({
    op: 'payment',
    invoice_id: invoiceId,
    wallet_id: request.walletId,
    customer_id: request.customerId,
    currency: request.currency,
    exponent: request.minorDigits,
    amount: request.amount.toFixed(),
  });
  const key = debitKeys.payment(request.paymentId);
  const { result } = await deps.ledger.transaction(async (trx) => {
    await deps.invoices.lock(trx, ctx, invoiceId);
    if ((await deps.invoices.find(trx, ctx, invoiceId))?.status === 'voided') return { result: { status: 'voided' as const }, events: [] };
    const earlier = await deps.invoices.debitByKey(trx, ctx, key);
    if (earlier) return { result: replayOf(earlier, hash), events: [] };

    const { result: written, events } = await deps.ledger.changeManyIn(trx, [{ ctx, walletId: request.walletId }], async ([change]) => {
      if (!change) throw new NotFoundError(`Wallet ${request.walletId} not found`, { field: 'wallet_id', wallet_id: request.walletId });
      refuseOtherWallet(change, request);
      const perCredit = minorPerCredit(change.wallet.conversionRate, request.minorDigits);
      const usable = change.wallet.creditBalance;
      if (request.amount.greaterThan(worthInMinor(usable, perCredit))) {
        throw new ValidationError('Insufficient credits: the payment is larger than the usable credits of the wallet', {
          field: 'amount',
          available_credits: toDecimalString(usable),
          available_amount: worthInMinor(usable, perCredit).toNumber(),
        });
      }
      const credits = creditsFor(request.amount, perCredit, usable);
      const entry = await debit(change, {
        credits,
        reason: 'INVOICE_PAYMENT',
        description: `Payment ${request.paymentId} of invoice ${invoiceId}`,
        idempotencyKey: key,
        requestHash: null,
      });
      return { walletId: change.wallet.id, transactionId: entry.id, credits, amount: request.amount };
    });
    await deps.invoices.insertDebits(trx, [invoiceDebit(ctx, invoiceId, key, written, deps.ledger.clock(), hash)]);
    return { result: { status: 'paid' as const, transactionId: written.transactionId, credits: written.credits }, events };
  });
  return result;
}

/** The answer of the payment made earlier with this id; another request with the id is refused (409). */
function replayOf(earlier: InvoiceDebit, hash: string): PaymentResult {
  if (earlier.requestHash !== hash) {
    throw new IdempotencyConflictError('This payment_id was already used with another request', {
      field: 'payment_id',
      invoice_id: earlier.invoiceId,
      transaction_id: earlier.transactionId,
    });
  }
  return { status: 'paid', transactionId: earlier.transactionId, credits: earlier.credits };
}

/** The wallet must be the customer's, in the invoice currency, and active. */
function refuseOtherWallet(change: WalletChange, request: PaymentRequest): void {
  const { wallet } = change;
  if (wallet.customerId !== request.customerId) {
    throw new ValidationError("The wallet is not the invoice customer's", { field: 'wallet_id', customer_id: request.customerId });
  }
  if (wallet.currency !== request.currency) {
    throw new ValidationError(`The wallet's currency is ${wallet.currency}, the invoice's ${request.currency}`, {
      field: 'wallet_id',
      wallet_currency: wallet.currency,
    });
  }
  change.requireActive();
}
