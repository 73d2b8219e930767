import { ValidationError } from '@billstream/errors';
import { ISO_4217_MINOR_DIGITS } from './iso4217';

/** True for a code of the ISO 4217 table, in any case ("usd", "USD"). */
export function isKnownCurrency(code: string): boolean {
  return /^[A-Za-z]{3}$/.test(code) && Object.hasOwn(ISO_4217_MINOR_DIGITS, code.toLowerCase());
}

/** The code as written on the wire and stored: lower case. Unknown codes: ValidationError on `currency`. */
export function normalizeCurrency(code: string): string {
  if (!isKnownCurrency(code)) {
    throw new ValidationError(`currency "${code}" is not a known ISO 4217 currency code`, { field: 'currency' });
  }
  return code.toLowerCase();
}

/** Digits of the currency's minor unit: usd 2, jpy 0, kwd 3. Unknown codes: ValidationError. */
export function minorDigits(code: string): number {
  return ISO_4217_MINOR_DIGITS[normalizeCurrency(code)] as number;
}
