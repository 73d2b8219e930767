import type { Decimal } from 'decimal.js';
import { autoTopupDue } from '../alerts/auto-topup';
import type { WalletChange } from './change';
import { credit } from './credit';

/** One auto top-up when a movement took the balance from at or above the threshold to below it. */
export function autoTopupOnCrossing(change: WalletChange, balanceBefore: Decimal): void {
  if (!autoTopupDue(change.wallet, balanceBefore)) return;
  const auto = change.wallet.autoTopup!;
  credit(change, {
    credits: auto.amount!,
    reason: auto.invoicing ? 'PURCHASED_CREDIT_INVOICED' : 'PURCHASED_CREDIT_DIRECT',
    pending: auto.invoicing,
    expiryDate: null,
    priority: null,
    description: 'Auto top-up',
    idempotencyKey: null,
    requestHash: null,
  });
}
