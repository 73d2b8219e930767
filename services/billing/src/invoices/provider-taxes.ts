import { createHash } from 'node:crypto';
import { z } from 'zod';
import { taxPercentage } from '@billstream/contracts';
import { isNegativeLine, percentageUnits, type LineRateTax, type TaxBehavior } from '../invoice-arithmetic';
import { settleInvoice, type BuyerTax, type Invoice, type InvoiceLine, type TaxBreakdownLine } from './domain';

/**
 * The HTTP tax provider's contract (docs/api/taxes.md#http-provider, ADR 0071), pure: the body
 * billing POSTs for a draft, the check of the answer, and the draft taxed with the answer.
 */

/** The seller as the settings' `invoice_settings` name it (null fields when not set). */
export interface ProviderSeller {
  company_name: string | null;
  address: string | null;
  country: string | null;
  tax_id: string | null;
}

export interface ProviderRequest {
  invoice_id: string;
  currency: string;
  seller: ProviderSeller;
  buyer: { address: Record<string, string | null> | null; tax_ids: Array<{ type: string; value: string }>; tax_exempt: BuyerTax['taxExempt'] };
  /** The lines that bear tax: positive net amounts (negative lines and 0 bear none). `amount` is the net, tax included when inclusive. */
  lines: Array<{ id: string; amount: number; tax_behavior: TaxBehavior; tax_code?: string; price_id: string | null }>;
}

/** Per line id: its behavior and its price's tax code, if any. */
export type ProviderLineContext = ReadonlyMap<string, { behavior: TaxBehavior; taxCode?: string | null }>;

/** The request of a draft (a purchase of credits bears none: no request, `undefined`). */
export function providerRequestOf(draft: Pick<Invoice, 'id' | 'currency' | 'billingReason' | 'lines'>, seller: ProviderSeller, buyer: ProviderRequest['buyer'], lines: ProviderLineContext): ProviderRequest | undefined {
  if (draft.billingReason === 'CREDIT_PURCHASE') return undefined;
  return {
    invoice_id: draft.id,
    currency: draft.currency,
    seller,
    buyer,
    lines: draft.lines
      .filter((l) => !isNegativeLine(l.lineType) && l.netAmount > 0)
      .map((l) => {
        const c = lines.get(l.id);
        return { id: l.id, amount: l.netAmount, tax_behavior: c?.behavior ?? 'exclusive', ...(c?.taxCode ? { tax_code: c.taxCode } : {}), price_id: l.priceId };
      }),
  };
}

const answerSchema = z.object({
  lines: z
    .array(
      z.object({
        id: z.string().min(1),
        taxes: z
          .array(
            z.object({
              name: z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters'),
              percentage: z.union([taxPercentage, z.number().min(0).max(100).transform((n) => String(n)).pipe(taxPercentage)]),
              amount: z.number().int('must be a whole number of minor units').min(0, 'must be at least 0').max(Number.MAX_SAFE_INTEGER),
            }),
          )
          .max(20, 'at most 20 taxes a line'),
      }),
    )
    .max(10_000),
});

/** One tax of a line as the provider answered it, checked (percentage without trailing zeros). */
export interface ProviderTax {
  name: string;
  percentage: string;
  amount: number;
}

export type CheckedAnswer = { ok: true; lines: Map<string, ProviderTax[]> } | { ok: false; reason: string };

const MILLION = 1_000_000n;

/** A percentage's 1/10,000 % units as the shortest decimal ("19.0000" → "19", "7.2500" → "7.25"). */
function percentageText(units: bigint): string {
  const whole = units / 10_000n;
  const frac = (units % 10_000n).toString().padStart(4, '0').replace(/0+$/, '');
  return frac ? `${whole}.${frac}` : `${whole}`;
}

/**
 * Checks the provider's answer against the request: its shape, every line of the request answered
 * once and no other line, no tax twice on a line (same name and percentage), and each amount the
 * rate's exact product within one minor unit: net × p / 100 on an exclusive line, net × p / (100 +
 * Σ p) on an inclusive one (the line's rates add on one base, as the built-in arithmetic's do), so
 * an inclusive line's taxes never pass its net.
 */
export function checkProviderAnswer(request: ProviderRequest, raw: unknown): CheckedAnswer {
  const parsed = answerSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return { ok: false, reason: `answer.${issue.path.join('.')}: ${issue.message}` };
  }
  const wanted = new Map(request.lines.map((l) => [l.id, l]));
  const out = new Map<string, ProviderTax[]>();
  for (const [k, line] of parsed.data.lines.entries()) {
    const asked = wanted.get(line.id);
    if (!asked) return { ok: false, reason: `answer.lines.${k}.id: ${line.id} is not a line of the request` };
    if (out.has(line.id)) return { ok: false, reason: `answer.lines.${k}.id: line ${line.id} is answered twice` };
    const units = line.taxes.map((t) => percentageUnits(t.percentage));
    const keys = new Set(line.taxes.map((t, i) => `${t.name}\n${units[i]}`));
    if (keys.size !== line.taxes.length) return { ok: false, reason: `answer.lines.${k}.taxes: a tax appears twice (same name and percentage)` };
    const net = BigInt(asked.amount);
    const d = asked.tax_behavior === 'inclusive' ? MILLION + units.reduce((s, u) => s + u, 0n) : MILLION;
    for (const [j, t] of line.taxes.entries()) {
      const off = BigInt(t.amount) * d - net * units[j]!;
      if (off > d || off < -d) return { ok: false, reason: `answer.lines.${k}.taxes.${j}.amount: ${t.amount} is not ${percentageText(units[j]!)} % of line ${line.id} (${asked.amount}, ${asked.tax_behavior}) within one minor unit` };
    }
    const sum = line.taxes.reduce((s, t) => s + t.amount, 0);
    if (asked.tax_behavior === 'inclusive' && sum > asked.amount) return { ok: false, reason: `answer.lines.${k}.taxes: they add to ${sum}, more than the inclusive line's ${asked.amount}` };
    out.set(
      line.id,
      line.taxes.map((t, j) => ({ name: t.name, percentage: percentageText(units[j]!), amount: t.amount })),
    );
  }
  const missing = request.lines.find((l) => !out.has(l.id));
  if (missing) return { ok: false, reason: `answer.lines: line ${missing.id} is not answered` };
  return { ok: true, lines: out };
}

/**
 * The `tax_rate_id` of a provider's rate (it has no `txr_` resource): `ext_` and the first 20 hex
 * digits of SHA-256 of its name and percentage, so one provider rate keeps one id on every line,
 * invoice, credit note and report. Its `code` is the provider's name.
 */
export function providerRateId(name: string, percentage: string): string {
  return `ext_${createHash('sha256').update(`${name}\n${percentage}`, 'utf8').digest('hex').slice(0, 20)}`;
}

type Taxable = Pick<Invoice, 'billingReason' | 'lines' | 'subtotal' | 'totalDiscount' | 'excessCredit' | 'prePaymentCreditNotesAmount'>;

/**
 * A priced draft taxed with a checked answer, as the built-in `taxed` stores its result: each
 * answered line its taxes (an inclusive line's taxable amount is its net less its taxes, an
 * exclusive line's its net), the invoice its sums, per-rate breakdown (country and region null)
 * and the buyer's identity, `tax_status: ok`; totals from `settleInvoice`.
 */
export function providerTaxed<T extends Taxable>(priced: T, request: ProviderRequest, answer: Map<string, ProviderTax[]>, buyer: BuyerTax): T & Pick<Invoice, 'totalTax' | 'exclusiveTax' | 'taxBreakdown' | 'reverseCharge' | 'taxExemptReason' | 'buyerTax' | 'taxStatus' | 'taxAttempts'> {
  const behaviors = new Map(request.lines.map((l) => [l.id, l.tax_behavior]));
  const breakdown = new Map<string, TaxBreakdownLine>();
  let totalTax = 0;
  let exclusiveTax = 0;
  const lines: InvoiceLine[] = priced.lines.map((l) => {
    const behavior = behaviors.get(l.id);
    const taxes = answer.get(l.id) ?? [];
    const sum = taxes.reduce((s, t) => s + t.amount, 0);
    const taxable = behavior === 'inclusive' ? l.netAmount - sum : l.netAmount;
    const rated: LineRateTax[] = taxes.map((t) => ({ taxRateId: providerRateId(t.name, t.percentage), code: t.name, percentage: t.percentage, taxableAmount: taxable, amount: t.amount }));
    for (const r of rated) {
      const b = breakdown.get(r.taxRateId) ?? { taxRateId: r.taxRateId, code: r.code, country: null, region: null, percentage: r.percentage, taxableAmount: 0, amount: 0 };
      breakdown.set(r.taxRateId, { ...b, taxableAmount: b.taxableAmount + r.taxableAmount, amount: b.amount + r.amount });
    }
    totalTax += sum;
    if (behavior === 'exclusive') exclusiveTax += sum;
    return { ...l, prepaidCreditsApplied: 0, taxAmount: sum, taxes: rated, taxBehavior: behavior ?? null };
  });
  const sums = { totalTax, exclusiveTax };
  const totals = settleInvoice({ ...priced, ...sums }, lines, 0);
  return {
    ...priced,
    lines,
    ...totals,
    ...sums,
    taxBreakdown: [...breakdown.values()],
    reverseCharge: buyer.taxExempt === 'reverse' && totalTax === 0,
    taxExemptReason: buyer.taxExempt === 'exempt' && totalTax === 0 ? 'customer_exempt' : null,
    buyerTax: buyer,
    taxStatus: 'ok',
    taxAttempts: 0,
  };
}
