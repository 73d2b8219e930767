/** Money in minor units shown in the currency's own digits (ISO 4217, as the API counts them). */
export function money(minor: number | null | undefined, currency: string): string {
  if (minor === null || minor === undefined) return '–';
  const code = currency.toUpperCase();
  let format: Intl.NumberFormat;
  try {
    format = new Intl.NumberFormat('en', { style: 'currency', currency: code });
  } catch {
    return `${minor} ${code} (minor units)`;
  }
  const digits = format.resolvedOptions().maximumFractionDigits ?? 2;
  return format.format(minor / 10 ** digits);
}

/** A timestamp as the person's local date and time, or – when absent. */
export function when(iso: string | null | undefined): string {
  if (!iso) return '–';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString('en-GB', { dateStyle: 'medium', timeStyle: 'short' });
}
