import { ValidationError } from '@billstream/errors';
import { Exact, exact, minorDigits } from '@billstream/money';

const halfUp = (value: Exact): Exact => value.toDecimalPlaces(0, Exact.ROUND_HALF_UP);

/**
 * The one rounding of a line: an exact amount in major units to integer minor units of the
 * currency, half up (0.5 minor units and more go up). Amounts are never negative.
 */
export function toMinorUnits(majorAmount: Exact, currency: string): number {
  const minor = halfUp(majorAmount.times(exact(10).pow(minorDigits(currency))));
  if (minor.gt(Number.MAX_SAFE_INTEGER)) {
    throw new ValidationError(`line amount ${majorAmount.toFixed()} ${currency} is too large to bill`, { field: 'amount' });
  }
  return minor.toNumber();
}

/**
 * The one rounding of a product already in minor units (a percentage of what lines have left,
 * an amount times a factor): half up to an integer. Never negative here either.
 */
export function roundMinorUnits(minorAmount: Exact): number {
  const minor = halfUp(minorAmount);
  if (minor.gt(Number.MAX_SAFE_INTEGER)) throw new ValidationError(`amount ${minor.toFixed()} is too large to bill`, { field: 'amount' });
  return minor.toNumber();
}

/** The sum of rounded lines: totals always add up to their lines, to the minor unit. */
export function sumAmounts(lines: ReadonlyArray<{ amount: number }>): number {
  const total = lines.reduce((acc, line) => acc + line.amount, 0);
  if (!Number.isSafeInteger(total)) throw new ValidationError('invoice total is too large to bill', { field: 'amount' });
  return total;
}
