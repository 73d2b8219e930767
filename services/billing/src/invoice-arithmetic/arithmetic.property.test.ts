import Decimal from 'decimal.js';
import fc from 'fast-check';
import { invoiceArithmetic, invoiceTotals, type ArithmeticLine, type DiscountInput, type InvoiceArithmetic } from '.';
import { PRICES, invoiceCase, money, type Case } from '../testing/arithmetic-arbitraries';

/**
 * docs/api/billing.md#invoice-arithmetic over random invoices: random CHARGE and COMMITMENT_TRUE_UP lines,
 * threshold deductions per price, PERCENTAGE and FIXED_AMOUNT discounts on random lines, and
 * proration credits, in random line order, then random credits, pre-payment credit notes and
 * payments. Every identity of the section holds, nothing is negative, nothing is offset,
 * discounted or credited beyond what a line has, and no minor unit is gained or lost. The
 * results equal an oracle written apart (BigInt and its own decimal.js clone: it shares no code
 * with the module, ADR 0037).
 */
const D = Decimal.clone({ precision: 200 });
/** The section's steps, written apart with BigInt: what the module must answer. */
function oracle(lines: ArithmeticLine[], discounts: DiscountInput[]) {
  const byPosition = [...lines].sort((a, b) => a.position - b.position);
  const billing = byPosition.filter((l) => l.lineType === 'CHARGE' || l.lineType === 'COMMITMENT_TRUE_UP');
  const left = new Map(billing.map((l) => [l.id, BigInt(l.amount)]));
  const offset = new Map(billing.map((l) => [l.id, 0n]));
  const discount = new Map(billing.map((l) => [l.id, 0n]));
  let excess = 0n;
  const take = (neg: ArithmeticLine, targets: ArithmeticLine[]) => {
    let need = -BigInt(neg.amount);
    for (const t of targets) {
      const part = need < left.get(t.id)! ? need : left.get(t.id)!;
      left.set(t.id, left.get(t.id)! - part);
      offset.set(t.id, offset.get(t.id)! + part);
      need -= part;
    }
    excess += need;
  };
  for (const d of byPosition.filter((l) => l.lineType === 'THRESHOLD_DEDUCTION')) take(d, billing.filter((l) => l.priceId === d.priceId));
  const amounts = discounts.map((d) => {
    const targets = billing.filter((l) => d.appliesTo.includes(l.id));
    const whole = targets.reduce((s, t) => s + left.get(t.id)!, 0n);
    let amount: bigint;
    if (d.kind === 'PERCENTAGE') amount = BigInt(new D(whole.toString()).times(d.percent).div(100).toDecimalPlaces(0, D.ROUND_HALF_UP).toFixed());
    else amount = BigInt(d.remaining) < whole ? BigInt(d.remaining) : whole;
    if (whole > 0n) {
      const parts = targets.map((t, k) => ({ t, k, floor: (amount * left.get(t.id)!) / whole, rem: (amount * left.get(t.id)!) % whole }));
      let rest = amount - parts.reduce((s, p) => s + p.floor, 0n);
      for (const p of [...parts].sort((a, b) => (b.rem > a.rem ? 1 : b.rem < a.rem ? -1 : a.k - b.k))) {
        const give = p.floor + (rest > 0n ? 1n : 0n);
        if (rest > 0n) rest -= 1n;
        left.set(p.t.id, left.get(p.t.id)! - give);
        discount.set(p.t.id, discount.get(p.t.id)! + give);
      }
    }
    return { discountId: d.discountId, amount: Number(amount) };
  });
  for (const c of byPosition.filter((l) => l.lineType === 'PRORATION_CREDIT')) take(c, billing);
  return {
    lines: lines.map((l) => ({ id: l.id, offsetAmount: Number(offset.get(l.id) ?? 0n), discountAmount: Number(discount.get(l.id) ?? 0n), netAmount: Number(left.get(l.id) ?? 0n) })),
    subtotal: lines.reduce((s, l) => s + l.amount, 0),
    discounts: amounts,
    totalDiscount: amounts.reduce((s, d) => s + d.amount, 0),
    excessCredit: Number(excess),
  };
}

const sum = (xs: number[]) => xs.reduce((s, x) => s + x, 0);
const isNegative = (l: ArithmeticLine) => l.lineType === 'PRORATION_CREDIT' || l.lineType === 'THRESHOLD_DEDUCTION';

function checkLines(c: Case, r: InvoiceArithmetic): void {
  const byId = new Map(c.lines.map((l) => [l.id, l]));
  expect(r.lines.map((l) => l.id)).toEqual(c.lines.map((l) => l.id));
  for (const m of r.lines) {
    const l = byId.get(m.id)!;
    for (const v of [m.offsetAmount, m.discountAmount, m.netAmount]) expect(Number.isSafeInteger(v) && v >= 0).toBe(true);
    if (isNegative(l)) expect(m).toEqual({ id: l.id, offsetAmount: 0, discountAmount: 0, netAmount: 0 });
    else expect(m.netAmount).toBe(l.amount - m.offsetAmount - m.discountAmount);
  }
  // Offsets go from negative lines to billing lines; a deduction only to its price's lines; none beyond the negative line.
  for (const o of r.offsets) {
    const from = byId.get(o.fromLineId)!;
    const to = byId.get(o.toLineId)!;
    expect(isNegative(from) && !isNegative(to) && o.amount > 0).toBe(true);
    if (from.lineType === 'THRESHOLD_DEDUCTION') expect(to.priceId).toBe(from.priceId);
  }
  for (const l of c.lines.filter(isNegative)) expect(sum(r.offsets.filter((o) => o.fromLineId === l.id).map((o) => o.amount))).toBeLessThanOrEqual(-l.amount);
  for (const l of c.lines.filter((x) => !isNegative(x))) {
    expect(sum(r.offsets.filter((o) => o.toLineId === l.id).map((o) => o.amount))).toBe(r.lines.find((m) => m.id === l.id)!.offsetAmount);
  }
}

function checkIdentities(c: Case, r: InvoiceArithmetic): void {
  const negatives = c.lines.filter(isNegative);
  const credits = negatives.filter((l) => l.lineType === 'PRORATION_CREDIT');
  expect(r.subtotal).toBe(sum(c.lines.map((l) => l.amount)));
  expect(sum(r.lines.map((l) => l.discountAmount))).toBe(r.totalDiscount);
  expect(sum(r.discounts.map((d) => d.amount))).toBe(r.totalDiscount);
  expect(r.discounts.map((d) => d.discountId)).toEqual(c.discounts.map((d) => d.discountId));
  // No minor unit gained or lost: what billing lines bill is net + offset + discount; what negative lines give is offset + excess.
  const billed = sum(c.lines.filter((l) => !isNegative(l)).map((l) => l.amount));
  expect(sum(r.lines.map((l) => l.netAmount + l.offsetAmount + l.discountAmount))).toBe(billed);
  expect(sum(r.offsets.map((o) => o.amount)) + r.excessCredit).toBe(0 - sum(negatives.map((l) => l.amount)));
  expect(sum(r.lines.map((l) => l.netAmount))).toBe(r.subtotal - r.totalDiscount + r.excessCredit);
  // When every deduction fits its price's lines, the excess is the proration credits' rest alone.
  const fits = PRICES.every(
    (p) => -sum(negatives.filter((l) => l.lineType === 'THRESHOLD_DEDUCTION' && l.priceId === p).map((l) => l.amount)) <= sum(c.lines.filter((l) => !isNegative(l) && l.priceId === p).map((l) => l.amount)),
  );
  if (fits) {
    const fromCredits = sum(r.offsets.filter((o) => credits.some((l) => l.id === o.fromLineId)).map((o) => o.amount));
    expect(fromCredits + r.excessCredit).toBe(0 - sum(credits.map((l) => l.amount)));
  }
  // A rest is excess only once every line it could offset has nothing left.
  if (r.excessCredit > 0 && credits.length > 0 && fits) expect(r.lines.every((l) => l.netAmount === 0)).toBe(true);
}

describe('invoice arithmetic (property, docs/api/billing.md#invoice-arithmetic)', () => {
  it('holds every identity, equals the oracle, and settles without any total going negative', () => {
    fc.assert(
      fc.property(invoiceCase, (c) => {
        const r = invoiceArithmetic({ lines: c.lines, discounts: c.discounts });
        expect({ lines: r.lines, subtotal: r.subtotal, discounts: r.discounts, totalDiscount: r.totalDiscount, excessCredit: r.excessCredit }).toEqual(oracle(c.lines, c.discounts));
        checkLines(c, r);
        checkIdentities(c, r);
        // Pure, and line order is the positions', not the input's.
        expect(invoiceArithmetic({ lines: [...c.lines].reverse(), discounts: c.discounts }).lines.reverse()).toEqual(r.lines);

        // Credits take at most each line's net; credit notes and payments at most what is left.
        const applied = r.lines.map((l, i) => Math.floor(l.netAmount * c.shares.credits[i % 12]!));
        const totalPrepaidCreditsApplied = sum(applied);
        const afterCredits = r.subtotal - r.totalDiscount + r.excessCredit - totalPrepaidCreditsApplied;
        const prePaymentCreditNotesAmount = Math.floor(afterCredits * c.shares.creditNotes);
        const amountPaid = Math.floor((afterCredits - prePaymentCreditNotesAmount) * c.shares.paid);
        const t = invoiceTotals(r, { totalPrepaidCreditsApplied, prePaymentCreditNotesAmount, amountPaid });
        expect(t.total).toBe(t.subtotal - t.totalDiscount + t.excessCredit - t.totalPrepaidCreditsApplied);
        expect(t.amountDue).toBe(t.total - t.prePaymentCreditNotesAmount);
        expect(t.amountRemaining).toBe(t.amountDue - t.amountPaid);
        expect(t.total).toBe(sum(r.lines.map((l) => l.netAmount)) - totalPrepaidCreditsApplied);
        for (const v of [t.total, t.amountDue, t.amountRemaining]) expect(v).toBeGreaterThanOrEqual(0);
        // One unit more paid than remains is refused, never a negative remainder.
        expect(() => invoiceTotals(r, { totalPrepaidCreditsApplied, prePaymentCreditNotesAmount, amountPaid: amountPaid + t.amountRemaining + 1 })).toThrow(/negative/);
      }),
      { numRuns: 1000 },
    );
  });

  it('without deductions, discounts or proration credits: every line nets its amount and nothing is offset or excess', () => {
    fc.assert(
      fc.property(fc.array(money, { maxLength: 12 }), (amounts) => {
        const lines = amounts.map((amount, i): ArithmeticLine => ({ id: `l${i}`, position: i, lineType: 'CHARGE', priceId: PRICES[i % 3]!, amount }));
        const r = invoiceArithmetic({ lines });
        expect(r.lines).toEqual(lines.map((l) => ({ id: l.id, offsetAmount: 0, discountAmount: 0, netAmount: l.amount })));
        expect(r).toMatchObject({ subtotal: sum(amounts), totalDiscount: 0, discounts: [], excessCredit: 0, offsets: [] });
      }),
    );
  });
});
