import { ValidationError } from '@billstream/errors';
import type { LedgerEntry } from '../entries/domain';
import type { WalletChange } from './change';
import { expireDue } from './expire';
import { flush } from './writes';

/** Completes or fails a pending entry (a transaction on the wire, hence the message). */
export async function settle(change: WalletChange, entry: LedgerEntry, status: 'COMPLETED' | 'FAILED'): Promise<LedgerEntry> {
  if (entry.status !== 'PENDING') {
    throw new ValidationError(`The transaction is ${entry.status}; only a PENDING transaction can be settled`, {
      field: 'status',
      transaction_status: entry.status,
    });
  }
  if (status === 'COMPLETED') change.requireActive();
  const { wallet } = change;
  const sign = entry.type === 'CREDIT' ? entry.creditAmount : entry.creditAmount.negated();
  if (entry.type === 'CREDIT') wallet.pendingCredits = wallet.pendingCredits.minus(entry.creditAmount);
  else wallet.pendingDebits = wallet.pendingDebits.minus(entry.creditAmount);
  change.dirty = true;
  entry.status = status;
  entry.updatedAt = change.now;
  if (status === 'COMPLETED') {
    if (entry.type === 'CREDIT') entry.creditsAvailable = entry.creditAmount;
    change.move(entry, sign);
    change.spendable = undefined;
  }
  await change.deps.entries.update(change.trx, entry);
  if (status === 'COMPLETED' && entry.expiryDate && entry.expiryDate <= change.now) {
    await flush(change);
    await expireDue(change);
  }
  return entry;
}
