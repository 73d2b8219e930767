import Decimal from 'decimal.js';

/** Exact decimal arithmetic for money and credits: 40 significant digits, no float ever. */
export const Money = Decimal.clone({ precision: 40, rounding: Decimal.ROUND_HALF_EVEN, toExpNeg: -40, toExpPos: 40 });
export type Money = Decimal;

/** A decimal string as accepted on the wire: optional sign, digits, optional fraction. */
export const DECIMAL_PATTERN = /^-?(0|[1-9]\d{0,27})(\.\d{1,18})?$/;

export function isDecimalString(value: string): boolean {
  return DECIMAL_PATTERN.test(value);
}

export function money(value: Decimal.Value): Decimal {
  return new Money(value);
}

/** Canonical decimal string: no exponent, no trailing zeros in the fraction ("1.50" -> "1.5"). */
export function toDecimalString(value: Decimal.Value): string {
  const d = new Money(value);
  if (d.isZero()) return '0';
  return d.toFixed();
}

export function sum(values: Decimal.Value[]): Decimal {
  return values.reduce<Decimal>((acc, v) => acc.plus(v), new Money(0));
}

/**
 * Exact decimals for ledgers. `Money` rounds to 40 significant digits; sums of 28-digit
 * amounts with 18 fraction digits and products with rates of any length need more, so a
 * ledger computes with enough digits that nothing ever rounds. Arithmetic on an `Exact`
 * value stays exact; `toDecimalString` writes it without losing a digit.
 */
export const Exact = Decimal.clone({ precision: 1000, rounding: Decimal.ROUND_HALF_EVEN, toExpNeg: -9e15, toExpPos: 9e15 });
export type Exact = Decimal;

export function exact(value: Decimal.Value): Decimal {
  return new Exact(value);
}

export const EXACT_ZERO: Decimal = new Exact(0);

/** The exact sum of `values` (no rounding, unlike `sum`). */
export function exactSum(values: Decimal.Value[]): Decimal {
  return values.reduce<Decimal>((acc, v) => acc.plus(v), EXACT_ZERO);
}

export { isKnownCurrency, minorDigits, normalizeCurrency } from './currency';
export { ISO_4217_MINOR_DIGITS } from './iso4217';
