import { minorDigits, type InvoiceResponse } from '@billstream/contracts';
import type { InvoiceSettings } from '../settings/store';
import { buyerTaxLines, countryName, isTaxed } from './tax';

/** The buyer as an invoice document shows it (snapshotted at finalization). */
export interface Buyer {
  id: string;
  external_id: string | null;
  name: string | null;
  email: string | null;
  /** The address's lines, in order (line 1, line 2, "postal code city", state, country). */
  address: string[];
}

export interface PaymentEntry {
  date: string;
  method: string;
  reference: string | null;
  amount: number;
  status: string;
}

export interface CreditNoteEntry {
  number: string;
  date: string;
  reason: string;
  /** In the lines' terms (tax included on inclusive lines). */
  amount: number;
  /** The tax it returns, and what it gives back (amount plus the exclusive lines' tax); absent on entries made before taxes. */
  tax?: number;
  total?: number;
  status: string;
}

/** Everything a document shows; the PDF's is the finalization's snapshot, the HTML's is live but for the parties. */
export interface DocumentModel {
  invoice: InvoiceResponse;
  seller: InvoiceSettings | null;
  buyer: Buyer;
  payments: PaymentEntry[];
  creditNotes: CreditNoteEntry[];
}

/** The address lines of a customer's address fields (empty parts left out). */
export function addressLines(a: Record<string, string | null> | null): string[] {
  if (!a) return [];
  const cityLine = [a.address_postal_code, a.address_city].filter(Boolean).join(' ');
  return [a.address_line1, a.address_line2, cityLine, a.address_state, a.address_country].filter((l): l is string => !!l);
}

function group(digits: string): string {
  return digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** Integer minor units as the currency shows them: 123456 usd -> "1,234.56 USD", 1250 jpy -> "1,250 JPY", 1250 kwd -> "1.250 KWD". */
export function formatMinor(amount: number, currency: string): string {
  const digits = minorDigits(currency);
  const negative = amount < 0;
  const text = String(Math.abs(amount)).padStart(digits + 1, '0');
  const whole = text.slice(0, text.length - digits);
  const fraction = digits > 0 ? `.${text.slice(text.length - digits)}` : '';
  return `${negative ? '-' : ''}${group(whole)}${fraction} ${currency.toUpperCase()}`;
}

/** A decimal string in major units (a unit amount) with at least the currency's minor digits: "49" usd -> "49.00 USD", "0.0005" -> "0.0005 USD". */
export function formatDecimal(value: string, currency: string): string {
  const digits = minorDigits(currency);
  const negative = value.startsWith('-');
  const [whole, fraction = ''] = (negative ? value.slice(1) : value).split('.');
  const padded = fraction.length >= digits ? fraction : fraction.padEnd(digits, '0');
  return `${negative ? '-' : ''}${group(whole ?? '0')}${padded ? `.${padded}` : ''} ${currency.toUpperCase()}`;
}

/** A quantity as stored (a decimal string), trailing zeros of its fraction dropped. */
export function formatQuantity(value: string): string {
  if (!value.includes('.')) return value;
  return value.replace(/0+$/, '').replace(/\.$/, '');
}

/** The UTC date of an ISO instant: "2026-11-28". */
export function formatDate(iso: string | null): string {
  return iso ? iso.slice(0, 10) : '';
}

/** What the document's header says of the invoice's state. */
export function statusLabel(i: InvoiceResponse): string | null {
  if (i.status === 'voided') return 'VOID';
  if (i.status === 'paid') return 'PAID';
  if (i.overdue) return 'OVERDUE';
  return null;
}

/**
 * The rows of the totals block: label and amount in minor units (deductions negative). A taxed
 * invoice (docs/api/taxes.md#documents) adds, before the credits applied, its total excluding tax
 * and its tax, so total excluding tax + tax - prepaid credits = total.
 */
export function totalRows(i: InvoiceResponse): Array<{ label: string; amount: number; strong?: boolean }> {
  const rows: Array<{ label: string; amount: number; strong?: boolean }> = [{ label: 'Subtotal', amount: i.subtotal }];
  if (i.total_discount !== 0) rows.push({ label: 'Discounts', amount: -i.total_discount });
  if (i.excess_credit !== 0) rows.push({ label: 'Excess credit', amount: i.excess_credit });
  if (isTaxed(i)) {
    rows.push({ label: 'Total excluding tax', amount: i.total_excluding_tax });
    rows.push({ label: i.reverse_charge ? 'Tax (reverse charge)' : 'Tax', amount: i.total_tax });
  }
  if (i.total_prepaid_credits_applied !== 0) rows.push({ label: 'Prepaid credits applied', amount: -i.total_prepaid_credits_applied });
  rows.push({ label: 'Total', amount: i.total, strong: true });
  if (i.pre_payment_credit_notes_amount !== 0) rows.push({ label: 'Credit notes', amount: -i.pre_payment_credit_notes_amount });
  rows.push({ label: 'Amount due', amount: i.amount_due });
  rows.push({ label: 'Amount paid', amount: i.amount_paid });
  if (i.post_payment_credit_notes_amount !== 0) rows.push({ label: 'Credit notes after payment', amount: i.post_payment_credit_notes_amount });
  rows.push({ label: 'Amount remaining', amount: i.amount_remaining, strong: true });
  return rows;
}

/** The lines of the seller block after the company: address lines, country (unless the address ends with it), tax id. */
export function sellerLines(s: InvoiceSettings | null): string[] {
  if (!s) return [];
  const address = s.address.split(/\r?\n/).filter((l) => l.trim() !== '');
  const last = (address.at(-1) ?? '').trim().toLowerCase();
  const country = s.country && ![s.country.toLowerCase(), countryName(s.country).toLowerCase()].includes(last) ? [countryName(s.country)] : [];
  return [...address, ...country, ...(s.tax_id ? [`Tax ID: ${s.tax_id}`] : [])];
}

/** The lines of the buyer block after the name: address, email, external id, and the tax ids the invoice was taxed with. */
export function buyerLines(b: Buyer, i?: InvoiceResponse): string[] {
  return [...b.address, ...(b.email ? [b.email] : []), ...(b.external_id ? [`Customer ID: ${b.external_id}`] : []), ...(i ? buyerTaxLines(i) : [])];
}
