import { ValidationError } from '@billstream/errors';
import { minorDigits } from '@billstream/contracts';
import { Exact, exact } from '@billstream/money';

/**
 * The one rounding of a line: an exact amount in major units to integer minor units of the
 * currency, half up (0.5 minor units and more go up). Amounts are never negative.
 */
export function toMinorUnits(majorAmount: Exact, currency: string): number {
  const minor = majorAmount.times(exact(10).pow(minorDigits(currency))).toDecimalPlaces(0, Exact.ROUND_HALF_UP);
  if (minor.gt(Number.MAX_SAFE_INTEGER)) {
    throw new ValidationError(`line amount ${majorAmount.toFixed()} ${currency} is too large to bill`, { field: 'amount' });
  }
  return minor.toNumber();
}

/** The sum of rounded lines: totals always add up to their lines, to the minor unit. */
export function sumAmounts(lines: ReadonlyArray<{ amount: number }>): number {
  const total = lines.reduce((acc, line) => acc + line.amount, 0);
  if (!Number.isSafeInteger(total)) throw new ValidationError('invoice total is too large to bill', { field: 'amount' });
  return total;
}
