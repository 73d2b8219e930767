import { EXACT_ZERO } from '@billstream/money';
import type { WalletChange } from './change';
import { recordDebit } from './debit-movement';

/** Writes one CREDIT_EXPIRED debit per credit whose expiry has passed; returns how many. */
export async function expireDue(change: WalletChange): Promise<number> {
  const expired = await change.deps.entries.expiredWithCredits(change.trx, change.wallet, change.wallet.id, change.now);
  for (const credit of expired) {
    change.creditsLeft.set(credit.id, EXACT_ZERO);
    recordDebit(change, {
      credits: credit.creditsAvailable,
      reason: 'CREDIT_EXPIRED',
      description: `Credits of ${credit.id} expired`,
      idempotencyKey: null,
      requestHash: null,
      expiredCreditId: credit.id,
    });
  }
  change.expiredCount += expired.length;
  return expired.length;
}
