import { ValidationError } from '@billstream/errors';
import type { WalletChange } from './change';
import { debit } from './debit';
import { settle } from './settle';

/** Closes the wallet for good: pending entries failed, remaining credits debited. */
export async function terminate(change: WalletChange): Promise<void> {
  const { wallet } = change;
  if (wallet.walletStatus === 'closed') {
    throw new ValidationError('The wallet is already closed', { field: 'wallet_status', wallet_status: 'closed' });
  }
  for (const pending of await change.deps.entries.pending(change.trx, wallet, wallet.id)) {
    await settle(change, pending, 'FAILED');
  }
  // Closed before the last debit: a closed wallet takes no auto top-up.
  wallet.walletStatus = 'closed';
  change.dirty = true;
  if (wallet.creditBalance.greaterThan(0)) {
    await debit(change, {
      credits: wallet.creditBalance,
      reason: 'WALLET_TERMINATION',
      description: 'Wallet terminated',
      idempotencyKey: null,
      requestHash: null,
    });
  }
}
