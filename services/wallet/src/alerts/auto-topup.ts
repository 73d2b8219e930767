import type { Decimal } from 'decimal.js';
import type { Wallet } from '../wallets/domain';

/**
 * An auto top-up fires once per crossing: when the credit balance went from at or above
 * the threshold to below it during one change of an active wallet.
 */
export function autoTopupDue(wallet: Wallet, balanceBefore: Decimal): boolean {
  const a = wallet.autoTopup;
  if (!a?.enabled || !a.threshold || !a.amount || wallet.walletStatus !== 'active') return false;
  return balanceBefore.greaterThanOrEqualTo(a.threshold) && wallet.creditBalance.lessThan(a.threshold);
}
