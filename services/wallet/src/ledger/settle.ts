import { ValidationError } from '@billstream/errors';
import type { WalletTransaction } from '../transactions/domain';
import type { WalletChange } from './change';
import { expireDue } from './expire';
import { flush } from './writes';

/** Completes or fails a pending transaction. */
export async function settle(change: WalletChange, txn: WalletTransaction, status: 'COMPLETED' | 'FAILED'): Promise<WalletTransaction> {
  if (txn.status !== 'PENDING') {
    throw new ValidationError(`The transaction is ${txn.status}; only a PENDING transaction can be settled`, {
      field: 'status',
      transaction_status: txn.status,
    });
  }
  if (status === 'COMPLETED') change.requireActive();
  const { wallet } = change;
  const sign = txn.type === 'CREDIT' ? txn.creditAmount : txn.creditAmount.negated();
  wallet.pendingCredits = wallet.pendingCredits.minus(sign);
  change.dirty = true;
  txn.status = status;
  txn.updatedAt = change.now;
  if (status === 'COMPLETED') {
    if (txn.type === 'CREDIT') txn.creditsAvailable = txn.creditAmount;
    change.move(txn, sign);
    change.spendable = undefined;
  }
  await change.deps.transactions.update(change.trx, txn);
  if (status === 'COMPLETED' && txn.expiryDate && txn.expiryDate <= change.now) {
    await flush(change);
    await expireDue(change);
  }
  return txn;
}
