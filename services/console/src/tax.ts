import type { Invoice, InvoiceLine, TaxBreakdown } from './types';

/**
 * How the console says what an invoice bore of tax (docs/api/taxes.md#invoices-bearing-tax), as
 * the documents do: an invoice of taxes off (no `buyer_tax`, no line with a behavior) shows none.
 */
export function isTaxed(i: Pick<Invoice, 'buyer_tax' | 'line_items'>): boolean {
  return i.buyer_tax !== null || i.line_items.some((l) => l.tax_behavior !== null);
}

/** A percentage as the API answers it ("19", "7.25") with its sign: "19 %", "7.25 %". */
export function percent(p: string): string {
  return `${p} %`;
}

/** The rates a line bore, added: "10 % + 2 %"; "–" when none (a credit, a reverse charge, an exemption). */
export function lineRates(l: Pick<InvoiceLine, 'taxes'>): string {
  return l.taxes.length ? l.taxes.map((t) => percent(t.percentage)).join(' + ') : '–';
}

/** A breakdown row's rate: its code and, when it has one, its region or country: "DE_VAT_19 (DE)". */
export function rateLabel(b: Pick<TaxBreakdown, 'code' | 'country' | 'region'>): string {
  const where = b.region ?? b.country;
  return where ? `${b.code} (${where})` : b.code;
}

/** A buyer's tax id: "eu_vat DE123456789". */
export function taxIdText(t: { type: string; value: string }): string {
  return `${t.type} ${t.value}`;
}

/** A tax rate's place: "DE", "US / US-CA", or "any" when it names none. */
export function placeOf(r: { country: string | null; region: string | null }): string {
  if (!r.country) return 'any';
  return r.region ? `${r.country} / ${r.region}` : r.country;
}
