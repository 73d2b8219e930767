/**
 * Numbers as a person reads them: grouped digits, money in the currency's format. Every value is
 * formatted from its exact decimal string (Intl.NumberFormat takes one and keeps every digit),
 * never through a float: 12345678901234567.891 stays what the API said.
 */
const DECIMAL = /^([+-])?(\d+)(?:\.(\d+))?$/;
/** Fraction digits an Intl.NumberFormat takes everywhere (100 in newer engines, 20 in older ones). */
const MAX_FRACTION = 20;

type Formatter = (value: string) => string;
const formatOf = (options: Intl.NumberFormatOptions): Formatter => {
  const f = new Intl.NumberFormat('en', options);
  // A decimal string keeps its digits (Intl.NumberFormat v3); the DOM typings still say number.
  return (value) => f.format(value as unknown as number);
};

/** A decimal string's parts, or null when it is not one (`1e5`, `abc`). */
function parts(text: string): { sign: string; int: string; frac: string } | null {
  const m = DECIMAL.exec(text.trim());
  if (!m) return null;
  return { sign: m[1] === '-' ? '-' : '', int: m[2]!.replace(/^0+(?=\d)/, ''), frac: (m[3] ?? '').replace(/0+$/, '') };
}

/** Minor units (an integer) as the exact decimal string of whole units: (123457, 2) -> "1234.57". */
export function minorToDecimal(minor: number | string, digits: number): string {
  const text = typeof minor === 'number' ? minor.toLocaleString('en', { useGrouping: false, maximumFractionDigits: 0 }) : minor.trim();
  const negative = text.startsWith('-');
  const abs = text.replace(/^[+-]/, '').padStart(digits + 1, '0');
  const whole = digits === 0 ? abs : `${abs.slice(0, -digits)}.${abs.slice(-digits)}`;
  return `${negative ? '-' : ''}${whole}`;
}

/** A quantity (a decimal string, as the API sends it) with grouped digits and every decimal kept: "1234567.5" -> "1,234,567.5". */
export function quantity(value: string | number | null | undefined): string {
  if (value === null || value === undefined || value === '') return '–';
  const text = String(value);
  const p = parts(text);
  if (!p) return text;
  return formatOf({ maximumFractionDigits: Math.min(p.frac.length, MAX_FRACTION) })(`${p.sign}${p.int}.${p.frac || '0'}`);
}

/** The currency's formatter with at least its own digits and at most `fraction` more; null for an unknown code. */
function currencyFormat(code: string, fraction?: number): { format: Formatter; digits: number } | null {
  try {
    const digits = new Intl.NumberFormat('en', { style: 'currency', currency: code }).resolvedOptions().maximumFractionDigits ?? 2;
    const max = Math.max(digits, Math.min(fraction ?? digits, MAX_FRACTION));
    return { format: formatOf({ style: 'currency', currency: code, minimumFractionDigits: digits, maximumFractionDigits: max }), digits };
  } catch {
    return null;
  }
}

/** Money in minor units shown in the currency's own format and digits (ISO 4217, as the API counts them): 123457 usd -> "$1,234.57", 4900 jpy -> "¥4,900". */
export function money(minor: number | null | undefined, currency: string): string {
  if (minor === null || minor === undefined) return '–';
  const code = currency.toUpperCase();
  const f = currencyFormat(code);
  if (!f) return `${quantity(minor)} ${code} (minor units)`;
  return f.format(minorToDecimal(minor, f.digits));
}

/**
 * An amount in whole units as a decimal string (a unit price "0.00125", a wallet balance "50")
 * in the currency's format: at least the currency's digits, every further one the value has.
 */
export function decimalMoney(value: string | null | undefined, currency: string): string {
  if (value === null || value === undefined || value === '') return '–';
  const code = currency.toUpperCase();
  const p = parts(value);
  const f = p && currencyFormat(code, p.frac.length);
  if (!p || !f) return `${value} ${code}`;
  return f.format(`${p.sign}${p.int}.${p.frac || '0'}`);
}

/** A timestamp as the person's local date and time, or – when absent. */
export function when(iso: string | null | undefined): string {
  if (!iso) return '–';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString('en-GB', { dateStyle: 'medium', timeStyle: 'short' });
}
