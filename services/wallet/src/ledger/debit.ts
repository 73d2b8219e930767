import { ValidationError } from '@billstream/errors';
import { EXACT_ZERO, toDecimalString } from '@billstream/money';
import type { Decimal } from 'decimal.js';
import type { LedgerEntry, SpendableCredit } from '../entries/domain';
import { allocate } from './allocate';
import type { WalletChange } from './change';
import { recordDebit, type DebitInput } from './debit-movement';
import { expireDue } from './expire';
import { flush } from './writes';

/**
 * Spends `credits` from the usable credits in the spec's order; more than usable: 400 and
 * nothing changes. `hint` (the total of a batch) lets one read serve the debits that follow.
 */
export async function debit(change: WalletChange, input: DebitInput, hint: Decimal = EXACT_ZERO): Promise<LedgerEntry> {
  refuseOverdraft(change, input.credits);
  let allocation = allocate(await spendableFor(change, input.credits, hint), input.credits);
  if (!allocation.shortfall.isZero()) {
    // Credits that expired in a change committed while this one waited for the lock:
    // write them off, then check again.
    await flush(change);
    change.spendable = undefined;
    await expireDue(change);
    refuseOverdraft(change, input.credits);
    allocation = allocate(await spendableFor(change, input.credits, hint), input.credits);
  }
  if (!allocation.shortfall.isZero()) {
    throw new Error(`ledger of ${change.wallet.id} does not add up: balance ${toDecimalString(change.wallet.creditBalance)} but spendable credits fall short`);
  }
  const cache = change.spendable!;
  const left = new Map(allocation.takes.map((t) => [t.id, t.left]));
  cache.credits = cache.credits.map((c) => (left.has(c.id) ? { ...c, creditsAvailable: left.get(c.id)! } : c));
  cache.total = cache.total.minus(input.credits);
  for (const t of allocation.takes) change.creditsLeft.set(t.id, t.left);
  return recordDebit(change, input);
}

function refuseOverdraft(change: WalletChange, credits: Decimal): void {
  const usable = change.wallet.creditBalance;
  if (credits.greaterThan(usable)) {
    throw new ValidationError('Insufficient credits: the debit is larger than the usable credits of the wallet', {
      field: 'credits',
      available_credits: toDecimalString(usable),
      requested_credits: toDecimalString(credits),
    });
  }
}

/**
 * The spendable credits covering `credits`, from the cache when it covers them (the
 * debits of a batch share one read), else read again after flushing this change's writes.
 */
async function spendableFor(change: WalletChange, credits: Decimal, hint: Decimal): Promise<SpendableCredit[]> {
  if (change.spendable && change.spendable.total.greaterThanOrEqualTo(credits)) return change.spendable.credits;
  await flush(change);
  const wanted = credits.greaterThan(hint) ? credits : hint;
  const rows = await change.deps.entries.spendable(change.trx, change.wallet.id, wanted, change.now);
  change.primeSpendable(rows);
  return rows;
}
