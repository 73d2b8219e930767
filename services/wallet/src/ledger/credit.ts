import type { Decimal } from 'decimal.js';
import type { CreditReason, LedgerEntry } from '../entries/domain';
import type { WalletChange } from './change';

export interface CreditInput {
  credits: Decimal;
  reason: CreditReason;
  pending: boolean;
  expiryDate: Date | null;
  priority: number | null;
  description: string | null;
  idempotencyKey: string | null;
  requestHash: string | null;
}

/**
 * Adds credits: a completed credit raises the balance and can be spent at once; a pending
 * one (invoiced) counts only in the real-time balance until it is settled.
 */
export function credit(change: WalletChange, input: CreditInput): LedgerEntry {
  const { wallet } = change;
  const entry = change.newEntry({
    type: 'CREDIT',
    status: input.pending ? 'PENDING' : 'COMPLETED',
    creditAmount: input.credits,
    amount: input.credits.times(wallet.topupConversionRate),
    reason: input.reason,
    expiryDate: input.expiryDate,
    priority: input.priority,
    description: input.description,
    idempotencyKey: input.idempotencyKey,
    requestHash: input.requestHash,
  });
  if (input.pending) {
    wallet.pendingCredits = wallet.pendingCredits.plus(input.credits);
    change.dirty = true;
  } else {
    entry.creditsAvailable = input.credits;
    change.move(entry, input.credits);
    change.spendable = undefined;
  }
  return change.record(entry);
}
