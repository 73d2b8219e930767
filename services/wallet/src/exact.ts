import Decimal from 'decimal.js';

/**
 * Exact decimal arithmetic for the ledger. The shared `Money` type rounds to 40 significant
 * digits; sums of 28-digit amounts with 18 fraction digits and products with rates of any
 * length need more, so the wallet computes with enough digits that nothing ever rounds.
 */
export const Exact = Decimal.clone({ precision: 1000, rounding: Decimal.ROUND_HALF_EVEN, toExpNeg: -9e15, toExpPos: 9e15 });
export type Exact = Decimal;

export function exact(value: Decimal.Value): Decimal {
  return new Exact(value);
}

export const ZERO = new Exact(0);

/** Canonical string: no exponent, no trailing fraction zeros, "0" for zero. */
export function str(value: Decimal): string {
  return value.isZero() ? '0' : value.toFixed();
}

export function sumOf(values: Decimal[]): Decimal {
  return values.reduce<Decimal>((acc, v) => acc.plus(v), ZERO);
}
