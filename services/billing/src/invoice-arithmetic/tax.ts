import { ArithmeticInputError } from './domain';

/**
 * Step (6) of the invoice arithmetic: the tax each positive line bears (docs/api/taxes.md,
 * ADR 0065). Pure and exact: a percentage has at most 4 decimals, so it is an integer P of
 * 1/10,000 %, and every tax is a rational of integers (BigInt), rounded half up once:
 *
 * - exclusive: base = net, tax per rate = net × P / 10^6;
 * - inclusive: base = net × 10^6 / (10^6 + ΣP), tax per rate = net × P / (10^6 + ΣP), and the
 *   line's taxable amount is net − Σ its rounded taxes, so base + tax = net exactly;
 * - LINE: each (line, rate) rounded half up; TOTAL: each rate's exact sum over the invoice rounded
 *   half up once, then spread back to its lines by largest remainder (each line gets the floor or
 *   the ceiling of its exact tax; ties go to the earlier line).
 *
 * Several rates of a line add, never compound. A line whose net is 0 or less bears none.
 */
export type TaxBehavior = 'exclusive' | 'inclusive';
export type TaxRounding = 'LINE' | 'TOTAL';

export interface TaxRateInput {
  id: string;
  code: string;
  /** A decimal string in [0, 100] with at most 4 decimals. */
  percentage: string;
}

export interface TaxableLine {
  id: string;
  /** The line's net amount in minor units (tax included when inclusive). */
  netAmount: number;
  behavior: TaxBehavior;
  rates: readonly TaxRateInput[];
}

export interface LineRateTax {
  taxRateId: string;
  code: string;
  percentage: string;
  taxableAmount: number;
  amount: number;
}

export interface LineTax {
  id: string;
  behavior: TaxBehavior;
  /** What the taxes are computed on: net (exclusive) or net − tax (inclusive). */
  taxableAmount: number;
  taxAmount: number;
  taxes: LineRateTax[];
}

export interface TaxBreakdownEntry {
  taxRateId: string;
  code: string;
  percentage: string;
  taxableAmount: number;
  amount: number;
}

export interface InvoiceTax {
  lines: LineTax[];
  totalTax: number;
  /** The tax of exclusive lines: what tax adds to the invoice's total (inclusive tax is inside the lines). */
  exclusiveTax: number;
  /** Per rate, in the order rates first appear on the lines. */
  breakdown: TaxBreakdownEntry[];
}

const MILLION = 1_000_000n;

/** A percentage as an integer of 1/10,000 % (`"7.25"` → 72500); throws on anything else. */
export function percentageUnits(percentage: string): bigint {
  const m = /^(\d{1,3})(?:\.(\d{1,4}))?$/.exec(percentage);
  if (!m) throw new ArithmeticInputError(`tax percentage ${JSON.stringify(percentage)} is not a decimal with at most 4 decimals`);
  const units = BigInt(m[1]!) * 10_000n + BigInt((m[2] ?? '').padEnd(4, '0'));
  if (units > MILLION) throw new ArithmeticInputError(`tax percentage ${percentage} is more than 100`);
  return units;
}

/** n / d with d > 0. */
interface Ratio {
  n: bigint;
  d: bigint;
}

const floorOf = (r: Ratio): bigint => r.n / r.d;
/** Half up: floor((2n + d) / 2d); every ratio here is 0 or more. */
const roundHalfUp = (r: Ratio): bigint => (2n * r.n + r.d) / (2n * r.d);
const add = (a: Ratio, b: Ratio): Ratio => (a.d === b.d ? { n: a.n + b.n, d: a.d } : { n: a.n * b.d + b.n * a.d, d: a.d * b.d });
/** a − b compared with 0 for the remainders n mod d over different denominators. */
const compare = (a: Ratio, b: Ratio): number => {
  const l = a.n * b.d;
  const r = b.n * a.d;
  return l === r ? 0 : l > r ? 1 : -1;
};

const asNumber = (v: bigint): number => {
  const n = Number(v);
  if (!Number.isSafeInteger(n)) throw new ArithmeticInputError(`tax amount ${v} is beyond the safe integer range`);
  return n;
};

interface Prepared {
  line: TaxableLine;
  units: bigint[];
  /** The exact tax per rate of the line. */
  exact: Ratio[];
}

function prepare(line: TaxableLine): Prepared {
  if (!Number.isSafeInteger(line.netAmount)) throw new ArithmeticInputError(`line ${line.id}: net ${line.netAmount} is not a minor-unit amount`);
  const ids = new Set(line.rates.map((r) => r.id));
  if (ids.size !== line.rates.length) throw new ArithmeticInputError(`line ${line.id}: a tax rate appears twice`);
  const units = line.rates.map((r) => percentageUnits(r.percentage));
  if (line.netAmount <= 0) return { line, units, exact: [] };
  const net = BigInt(line.netAmount);
  const d = line.behavior === 'inclusive' ? MILLION + units.reduce((s, u) => s + u, 0n) : MILLION;
  return { line, units, exact: units.map((u) => ({ n: net * u, d })) };
}

/**
 * Inclusive only: rounded taxes may not exceed the net (only when rates add past 100 % on a line
 * of a few minor units): the excess comes off the rates whose exact tax was rounded up the most.
 */
function withinNet(prepared: Prepared, amounts: bigint[]): bigint[] {
  const { line, exact } = prepared;
  let excess = amounts.reduce((s, a) => s + a, 0n) - BigInt(line.netAmount);
  if (line.behavior !== 'inclusive' || excess <= 0n) return amounts;
  const out = [...amounts];
  // Rounded up by (amount − exact): largest first, the later rate first on a tie.
  const order = out.map((_, i) => i).sort((a, b) => compare({ n: out[b]! * exact[b]!.d - exact[b]!.n, d: exact[b]!.d }, { n: out[a]! * exact[a]!.d - exact[a]!.n, d: exact[a]!.d }) || b - a);
  for (const i of order) {
    if (excess === 0n) break;
    if (out[i]! > 0n) {
      out[i]! -= 1n;
      excess -= 1n;
    }
  }
  return out;
}

/** The taxes of an invoice's lines under `rounding` (step 6; the lines as the arithmetic priced them). */
export function invoiceTax(lines: readonly TaxableLine[], rounding: TaxRounding): InvoiceTax {
  const prepared = lines.map(prepare);
  const amounts: bigint[][] = prepared.map((p) => p.exact.map(roundHalfUp));
  if (rounding === 'TOTAL') {
    // Per rate: the invoice's exact sum rounded once, spread to the lines by largest remainder.
    const byRate = new Map<string, Array<{ line: number; rate: number }>>();
    prepared.forEach((p, li) => p.exact.forEach((_, ri) => {
      const id = p.line.rates[ri]!.id;
      byRate.set(id, [...(byRate.get(id) ?? []), { line: li, rate: ri }]);
    }));
    for (const cells of byRate.values()) {
      const exacts = cells.map((c) => prepared[c.line]!.exact[c.rate]!);
      const total = roundHalfUp(exacts.reduce(add, { n: 0n, d: 1n }));
      const floors = exacts.map(floorOf);
      let left = total - floors.reduce((s, f) => s + f, 0n);
      const remainder = (i: number): Ratio => ({ n: exacts[i]!.n % exacts[i]!.d, d: exacts[i]!.d });
      const order = cells.map((_, i) => i).sort((a, b) => compare(remainder(b), remainder(a)) || a - b);
      cells.forEach((c, i) => (amounts[c.line]![c.rate] = floors[i]!));
      for (const i of order) {
        if (left <= 0n) break;
        amounts[cells[i]!.line]![cells[i]!.rate]! += 1n;
        left -= 1n;
      }
    }
  }
  const breakdown = new Map<string, TaxBreakdownEntry>();
  const out: LineTax[] = prepared.map((p, li) => {
    const { line } = p;
    if (p.exact.length === 0) return { id: line.id, behavior: line.behavior, taxableAmount: Math.max(line.netAmount, 0), taxAmount: 0, taxes: [] };
    const taxes = withinNet(p, amounts[li]!);
    const taxAmount = taxes.reduce((s, a) => s + a, 0n);
    const taxable = asNumber(line.behavior === 'inclusive' ? BigInt(line.netAmount) - taxAmount : BigInt(line.netAmount));
    const rates = line.rates.map((r, ri) => ({ taxRateId: r.id, code: r.code, percentage: r.percentage, taxableAmount: taxable, amount: asNumber(taxes[ri]!) }));
    for (const r of rates) {
      const entry = breakdown.get(r.taxRateId) ?? { ...r, taxableAmount: 0, amount: 0 };
      breakdown.set(r.taxRateId, { ...entry, taxableAmount: entry.taxableAmount + r.taxableAmount, amount: entry.amount + r.amount });
    }
    return { id: line.id, behavior: line.behavior, taxableAmount: taxable, taxAmount: asNumber(taxAmount), taxes: rates };
  });
  const totalTax = out.reduce((s, l) => s + l.taxAmount, 0);
  const exclusiveTax = out.reduce((s, l) => s + (l.behavior === 'exclusive' ? l.taxAmount : 0), 0);
  return { lines: out, totalTax, exclusiveTax, breakdown: [...breakdown.values()] };
}

export interface NoteLineTax {
  taxAmount: number;
  taxes: Array<{ taxRateId: string; amount: number }>;
  /** What the note line gives back in all: its amount, plus its tax when the line was exclusive. */
  total: number;
}

/**
 * The tax a credit note line returns: per rate, round(tax × after ÷ net) − round(tax × before ÷ net),
 * where `net` is the billed line's net amount (in the line's terms: tax included when inclusive),
 * `before` what earlier notes credited of it and `after` = before + `amount`. So the notes of a line
 * return exactly its tax once it is wholly credited, and never more.
 */
export function creditNoteLineTax(billed: LineTax, netAmount: number, creditedBefore: number, amount: number): NoteLineTax {
  for (const [what, v] of [['net', netAmount], ['credited before', creditedBefore], ['amount', amount]] as const) {
    if (!Number.isSafeInteger(v) || v < 0) throw new ArithmeticInputError(`credit note line of ${billed.id}: ${what} ${v} is not a minor-unit amount`);
  }
  if (creditedBefore + amount > netAmount) throw new ArithmeticInputError(`credit note line of ${billed.id}: ${creditedBefore + amount} credited of a net of ${netAmount}`);
  const returned = (tax: number, credited: number): bigint => (netAmount === 0 ? 0n : roundHalfUp({ n: BigInt(tax) * BigInt(credited), d: BigInt(netAmount) }));
  const taxes = billed.taxes.map((t) => ({ taxRateId: t.taxRateId, amount: asNumber(returned(t.amount, creditedBefore + amount) - returned(t.amount, creditedBefore)) }));
  const taxAmount = taxes.reduce((s, t) => s + t.amount, 0);
  return { taxAmount, taxes, total: billed.behavior === 'exclusive' ? amount + taxAmount : amount };
}
