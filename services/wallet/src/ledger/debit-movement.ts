import type { Decimal } from 'decimal.js';
import type { DebitReason, LedgerEntry } from '../entries/domain';
import { autoTopupOnCrossing } from './auto-topup';
import type { WalletChange } from './change';

export interface DebitInput {
  credits: Decimal;
  reason: DebitReason;
  description: string | null;
  idempotencyKey: string | null;
  requestHash: string | null;
}

/**
 * Records a completed debit of `credits` whose credits are already taken (by a client's
 * debit, an expiry or a termination): the row, the balance movement, then the auto top-up
 * when the movement crossed its threshold.
 */
export function recordDebit(change: WalletChange, input: DebitInput & { expiredCreditId?: string }): LedgerEntry {
  const entry = change.newEntry({
    type: 'DEBIT',
    status: 'COMPLETED',
    creditAmount: input.credits,
    amount: input.credits.times(change.wallet.conversionRate),
    reason: input.reason,
    description: input.description,
    idempotencyKey: input.idempotencyKey,
    requestHash: input.requestHash,
    expiredCreditId: input.expiredCreditId ?? null,
  });
  change.move(entry, input.credits.negated());
  change.record(entry);
  autoTopupOnCrossing(change, entry.creditBalanceBefore);
  return entry;
}
