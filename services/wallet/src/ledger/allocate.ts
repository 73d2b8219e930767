import type { Decimal } from 'decimal.js';
import type { SpendableCredit } from '../entries/domain';

/**
 * The spec's spending order: lower priority first (no priority last), then the earlier
 * expiry (no expiry last), then the older credit; the id breaks ties as the database does.
 */
export function spendingOrder(a: SpendableCredit, b: SpendableCredit): number {
  return (
    nullsLast(a.priority, b.priority) ||
    nullsLast(a.expiryDate?.getTime() ?? null, b.expiryDate?.getTime() ?? null) ||
    a.createdAt.getTime() - b.createdAt.getTime() ||
    (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  );
}

function nullsLast(a: number | null, b: number | null): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return a - b;
}

/** What a debit takes from one credit, and what the credit holds afterwards. */
export interface Take {
  id: string;
  take: Decimal;
  left: Decimal;
}

export interface Allocation {
  /** The credits the debit consumes, in spending order. */
  takes: Take[];
  /** What the credits could not cover (zero when they cover the amount). */
  shortfall: Decimal;
}

/**
 * Which credits a debit of `amount` consumes and how much of each: the credits in spending
 * order, each emptied before the next is touched, the last one only as far as needed.
 * Pure: the credits are not changed.
 */
export function allocate(credits: readonly SpendableCredit[], amount: Decimal): Allocation {
  const takes: Take[] = [];
  let remaining = amount;
  for (const credit of [...credits].sort(spendingOrder)) {
    if (remaining.isZero()) break;
    if (credit.creditsAvailable.isZero()) continue;
    const take = credit.creditsAvailable.lessThan(remaining) ? credit.creditsAvailable : remaining;
    takes.push({ id: credit.id, take, left: credit.creditsAvailable.minus(take) });
    remaining = remaining.minus(take);
  }
  return { takes, shortfall: remaining };
}
