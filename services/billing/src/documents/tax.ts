import type { InvoiceResponse } from '@billstream/contracts';
import type { InvoiceSettings } from '../settings/store';

/**
 * What an invoice document shows of tax (docs/api/taxes.md#documents): pure, shared by the PDF and
 * the hosted page. An invoice taxed with taxes off (no `buyer_tax`, no line with a behavior) shows
 * none of it, so it looks as it did before taxes.
 */
type Line = InvoiceResponse['line_items'][number];

/** The text under "Reverse charge" when the seller's settings name none (`invoice_settings.reverse_charge_text`). */
export const DEFAULT_REVERSE_CHARGE_TEXT = 'Reverse charge: VAT to be accounted for by the recipient (Article 196, Council Directive 2006/112/EC).';

/** The text of a buyer's exemption. */
export const EXEMPT_TEXT = 'Tax exempt: the buyer is exempt from tax; no tax is charged.';

/** How a buyer's tax id type is named on a document. */
const TAX_ID_LABELS: Record<string, string> = {
  eu_vat: 'VAT ID',
  gb_vat: 'VAT ID (GB)',
  ch_vat: 'VAT ID (CH)',
  no_vat: 'VAT ID (NO)',
  au_abn: 'ABN',
  nz_gst: 'GST number (NZ)',
  ca_bn: 'Business number (CA)',
  in_gst: 'GSTIN',
  us_ein: 'EIN',
  br_cnpj: 'CNPJ',
};

/** Whether the invoice went through the tax step: then its documents show the tax column, breakdown and totals. */
export function isTaxed(i: InvoiceResponse): boolean {
  return i.buyer_tax !== null || i.line_items.some((l) => l.tax_behavior !== null);
}

/** A percentage as stored ("19", "7.25", "0") as a document shows it: "19%", "7.25%", "0%". */
export function formatPercentage(p: string): string {
  return `${p}%`;
}

/** The rates a line bore, added ("10% + 2%"), or "–" when it bore none (a credit, reverse charge, an exemption). */
export function lineRates(l: Line): string {
  return l.taxes.length ? l.taxes.map((t) => formatPercentage(t.percentage)).join(' + ') : '–';
}

/** Whether the line's amount holds its tax (an inclusive price): its amount is marked "incl. tax". */
export function isInclusive(l: Line): boolean {
  return l.tax_behavior === 'inclusive' && l.taxes.length > 0;
}

/** The buyer's tax ids, as the invoice's snapshot (`buyer_tax`) has them: "VAT ID: DE123456789". */
export function buyerTaxLines(i: InvoiceResponse): string[] {
  return (i.buyer_tax?.tax_ids ?? []).map((t) => `${TAX_ID_LABELS[t.type] ?? t.type}: ${t.value}`);
}

/** One row of the breakdown: the rate's code (with its country or region), percentage, what it taxed and its tax; 0 % rates too. */
export interface BreakdownRow {
  rate: string;
  percentage: string;
  taxable: number;
  tax: number;
}

export function breakdownRows(i: InvoiceResponse): BreakdownRow[] {
  return i.tax_breakdown.map((b) => ({
    rate: b.region ?? b.country ? `${b.code} (${b.region ?? b.country})` : b.code,
    percentage: formatPercentage(b.percentage),
    taxable: b.taxable_amount,
    tax: b.amount,
  }));
}

/** The notices under the totals: the reverse charge's legal text (the seller's, else the default), or the exemption. */
export function taxNotices(i: InvoiceResponse, seller: InvoiceSettings | null): Array<{ title: string; text: string }> {
  const notices: Array<{ title: string; text: string }> = [];
  if (i.reverse_charge) notices.push({ title: 'Reverse charge', text: seller?.reverse_charge_text ?? DEFAULT_REVERSE_CHARGE_TEXT });
  if (i.tax_exempt_reason === 'customer_exempt') notices.push({ title: 'Tax exempt', text: EXEMPT_TEXT });
  return notices;
}

/** The seller's country (ISO 3166-1 alpha-2) in English, "Germany"; the code itself when the runtime knows no name. */
export function countryName(code: string): string {
  try {
    return new Intl.DisplayNames(['en'], { type: 'region' }).of(code) ?? code;
  } catch {
    return code;
  }
}
