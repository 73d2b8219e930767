import { invoiceTax, isNegativeLine, type TaxBehavior, type TaxRounding } from '../invoice-arithmetic';
import type { RateRef } from '../taxes/line-rates';
import { settleInvoice, UNTAXED, type BuyerTax, type Invoice, type InvoiceLine, type TaxBreakdownLine } from './domain';

/** What step (6) taxes an invoice with (docs/api/taxes.md#invoices-bearing-tax): resolved by `taxes/invoice-taxes.ts`. */
export interface InvoiceTaxContext {
  rounding: TaxRounding;
  buyer: BuyerTax;
  reverseCharge: boolean;
  exemptReason: 'customer_exempt' | null;
  /** Per line id: its behavior and the rates it bears (none on an exempt or reverse-charged buyer). */
  lines: ReadonlyMap<string, { behavior: TaxBehavior; rates: readonly RateRef[] }>;
}

type Taxable = Pick<Invoice, 'billingReason' | 'lines' | 'subtotal' | 'totalDiscount' | 'excessCredit' | 'prePaymentCreditNotesAmount'>;

/**
 * A priced invoice (steps 1-5) taxed by step (6) through the arithmetic's `invoiceTax`: each
 * positive line bears its rates, the invoice its sums, breakdown and the buyer's identity, and
 * the totals come from `invoiceTotals` with the exclusive tax. A purchase of credits (an
 * advance payment) and negative lines bear none. Pure; the lines' credits start at 0 (a draft).
 */
export function taxed<T extends Taxable>(priced: T, ctx: InvoiceTaxContext): T & typeof UNTAXED {
  if (priced.billingReason === 'CREDIT_PURCHASE') return { ...priced, ...UNTAXED };
  const input = priced.lines.map((l) => {
    const c = ctx.lines.get(l.id);
    const positive = !isNegativeLine(l.lineType) && l.netAmount > 0;
    return { id: l.id, netAmount: positive ? l.netAmount : 0, behavior: c?.behavior ?? 'exclusive', rates: positive && c ? c.rates : [] };
  });
  const tax = invoiceTax(input, ctx.rounding);
  const lines: InvoiceLine[] = priced.lines.map((l, i) => {
    const t = tax.lines[i]!;
    return { ...l, prepaidCreditsApplied: 0, taxAmount: t.taxAmount, taxes: t.taxes, taxBehavior: ctx.lines.has(l.id) ? t.behavior : null };
  });
  const refs = new Map(input.flatMap((l) => l.rates.map((r) => [r.id, r] as const)));
  const taxBreakdown: TaxBreakdownLine[] = tax.breakdown.map((b) => ({ ...b, country: refs.get(b.taxRateId)?.country ?? null, region: refs.get(b.taxRateId)?.region ?? null }));
  const sums = { totalTax: tax.totalTax, exclusiveTax: tax.exclusiveTax };
  const totals = settleInvoice({ ...priced, ...sums }, lines, 0);
  return { ...priced, lines, ...totals, ...sums, taxBreakdown, reverseCharge: ctx.reverseCharge, taxExemptReason: ctx.exemptReason, buyerTax: ctx.buyer, taxStatus: 'ok' };
}
