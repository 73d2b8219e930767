import { minorDigits } from '@billstream/contracts';

function digitsOf(currency: string): number {
  try {
    return minorDigits(currency);
  } catch {
    return 2;
  }
}

/**
 * An amount typed in the currency's units ("12.50" USD) as the API counts it, in minor units
 * (1250). Text that is not such an amount is sent as it is, for the route's schema to name
 * what is wrong next to the field; empty is absent.
 */
export function toMinor(text: string | undefined, currency: string): number | string | undefined {
  const t = (text ?? '').trim();
  if (t === '') return undefined;
  const digits = digitsOf(currency);
  const m = /^(\d{1,15})(?:\.(\d+))?$/.exec(t);
  if (!m || (m[2]?.length ?? 0) > digits) return t;
  return Number(m[1]) * 10 ** digits + Number((m[2] ?? '').padEnd(digits, '0') || '0');
}

/** Minor units as the text a person would type: 1250 USD -> "12.50". */
export function fromMinor(minor: number, currency: string): string {
  const digits = digitsOf(currency);
  return (minor / 10 ** digits).toFixed(digits);
}
