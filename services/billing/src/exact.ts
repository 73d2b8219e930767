import { Money } from '@billstream/money';
import type Decimal from 'decimal.js';

/**
 * `Money` with room for exact products. `Money` rounds to 40 significant digits, but a usage
 * quantity (up to 46 digits) times a price (up to 40) has up to 86, and a line must be
 * computed exactly before its single rounding; with 1000 digits nothing here ever rounds.
 */
export const Exact = Money.clone({ precision: 1000, toExpNeg: -9e15, toExpPos: 9e15 });
export type Exact = Decimal;

export function exact(value: Decimal.Value): Decimal {
  return new Exact(value);
}

/** Canonical decimal string: no exponent, no trailing fraction zeros, "0" for zero. */
export function decimalString(value: Decimal): string {
  return value.isZero() ? '0' : value.toFixed();
}
