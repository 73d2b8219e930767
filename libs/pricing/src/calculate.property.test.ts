import Decimal from 'decimal.js';
import fc from 'fast-check';
import { minorDigits } from '@billstream/money';
import { sumAmounts, usageLines, type LineAmount, type Tier, type UsageCharge } from './index';

/** The oracle's own arithmetic: independent of the calculator's, and wide enough never to round. */
const D = Decimal.clone({ precision: 200 });

const currency = fc.constantFrom('usd', 'eur', 'jpy', 'krw', 'kwd', 'bhd', 'clf');

/** A decimal string with up to `scale` decimals, between 0 and `max`. */
function decimal(max: number, maxScale: number, min = 0) {
  return fc
    .tuple(fc.integer({ min: 0, max: maxScale }), fc.double({ min, max, noNaN: true }))
    .map(([scale, v]) => new D(v).toDecimalPlaces(scale, D.ROUND_DOWN))
    .filter((d) => d.gte(min))
    .map((d) => (d.isZero() ? '0' : d.toFixed()));
}

const amount = decimal(1000, 12);
const quantity = fc.oneof(decimal(100_000, 6), fc.integer({ min: 0, max: 5000 }).map(String));

const tiers: fc.Arbitrary<Tier[]> = fc
  .tuple(
    fc.uniqueArray(decimal(10_000, 4, 0.0001), { minLength: 0, maxLength: 4, selector: (s) => new D(s).toString() }),
    fc.array(fc.tuple(amount, fc.option(amount, { nil: null })), { minLength: 5, maxLength: 5 }),
  )
  .map(([bounds, prices]) => {
    const sorted = bounds.map((b) => new D(b)).sort((a, b) => a.comparedTo(b)).map((b) => b.toFixed());
    return [...sorted, null].map((upTo, i) => ({ upTo, unitAmount: prices[i][0], flatAmount: prices[i][1] }));
  });

/** Exact major-unit amount -> minor units, half up: the rule the calculator must follow. */
function halfUpMinor(exact: Decimal, cur: string): number {
  return exact.times(new D(10).pow(minorDigits(cur))).toDecimalPlaces(0, D.ROUND_HALF_UP).toNumber();
}

/** The units of a usage inside tier i: the part of [0, q] above the previous bound and up to its own. */
function unitsInTier(list: Tier[], i: number, q: Decimal): Decimal {
  const lower = i === 0 ? new D(0) : new D(list[i - 1].upTo as string);
  const upper = list[i].upTo === null ? q : D.min(q, list[i].upTo as string);
  return D.max(upper.minus(lower), 0);
}

function exactOfLine(line: LineAmount): Decimal {
  const flat = line.tier?.flatAmount && !new D(line.quantity).isZero() ? line.tier.flatAmount : 0;
  return new D(line.quantity).times(line.unitAmount).plus(flat);
}

const runs = { numRuns: 200 };

describe('price calculator properties', () => {
  it('SLAB: the lines add up to the sum over tiers of units in the tier x its price (+ flat), each rounded once', () => {
    fc.assert(
      fc.property(currency, tiers, quantity, (cur, list, q) => {
        const lines = usageLines({ billingModel: 'TIERED', tierMode: 'SLAB', tiers: list, currency: cur }, q);
        const usage = new D(q);
        const expected = list
          .map((t, i) => ({ t, units: unitsInTier(list, i, usage) }))
          .filter(({ units }) => units.gt(0))
          .map(({ t, units }) => halfUpMinor(units.times(t.unitAmount).plus(t.flatAmount ?? 0), cur));
        expect(sumAmounts(lines)).toBe(expected.reduce((a, b) => a + b, 0));
        expect(lines.reduce((s, l) => s.plus(l.quantity), new D(0)).equals(usage)).toBe(true);
        expect(lines.length).toBe(Math.max(1, expected.length));
      }),
      runs,
    );
  });

  it('VOLUME: the total is the price of the tier holding the usage x the usage (+ its flat amount)', () => {
    fc.assert(
      fc.property(currency, tiers, quantity, (cur, list, q) => {
        const [line, ...rest] = usageLines({ billingModel: 'TIERED', tierMode: 'VOLUME', tiers: list, currency: cur }, q);
        const usage = new D(q);
        const tier = list[list.filter((t) => t.upTo !== null && new D(t.upTo).lt(usage)).length];
        const flat = usage.isZero() ? 0 : (tier.flatAmount ?? 0);
        expect(rest).toEqual([]);
        expect(line.unitAmount).toBe(new D(tier.unitAmount).toFixed());
        expect(line.amount).toBe(halfUpMinor(usage.times(tier.unitAmount).plus(flat), cur));
      }),
      runs,
    );
  });

  it('PACKAGE: UP bills at least DOWN, at most one package more, and both bracket the usage', () => {
    fc.assert(
      fc.property(currency, amount, decimal(1000, 4, 0.0001), quantity, (cur, price, size, q) => {
        const line = (round: 'UP' | 'DOWN') => usageLines({ billingModel: 'PACKAGE', amount: price, package: { size, round }, currency: cur }, q)[0];
        // Tiny packages of a large usage can price past what a line can bill (integer minor units
        // within Number.MAX_SAFE_INTEGER): the calculator refuses those with a 400, never rounds them.
        const mostMinor = new D(q).div(size).ceil().times(price).times(new D(10).pow(minorDigits(cur))).toDecimalPlaces(0, D.ROUND_HALF_UP);
        if (mostMinor.gt(Number.MAX_SAFE_INTEGER)) {
          expect(() => line('UP')).toThrow(/too large to bill/);
          return;
        }
        const up = line('UP');
        const down = line('DOWN');
        const packagesUp = new D(up.quantity);
        const packagesDown = new D(down.quantity);
        expect(up.amount).toBeGreaterThanOrEqual(down.amount);
        expect(packagesUp.isInteger() && packagesDown.isInteger()).toBe(true);
        expect(packagesUp.minus(packagesDown).lte(1)).toBe(true);
        expect(packagesDown.times(size).lte(q)).toBe(true);
        expect(packagesUp.times(size).gte(q)).toBe(true);
        expect(up.amount).toBe(halfUpMinor(packagesUp.times(price), cur));
      }),
      runs,
    );
  });

  it('totals never lose or gain a minor unit against the sum of lines; each line is its exact amount rounded once, half up', () => {
    const usagePrice: fc.Arbitrary<Omit<UsageCharge, 'currency'>> = fc.oneof(
      amount.map((a) => ({ billingModel: 'FLAT_FEE' as const, amount: a })),
      fc.tuple(amount, decimal(100, 3, 0.001), fc.constantFrom('UP' as const, 'DOWN' as const)).map(([a, size, round]) => ({ billingModel: 'PACKAGE' as const, amount: a, package: { size, round } })),
      fc.tuple(tiers, fc.constantFrom('VOLUME' as const, 'SLAB' as const)).map(([list, tierMode]) => ({ billingModel: 'TIERED' as const, tierMode, tiers: list })),
    );
    fc.assert(
      fc.property(currency, fc.array(fc.tuple(usagePrice, quantity), { minLength: 1, maxLength: 8 }), (cur, charges) => {
        const lines = charges.flatMap(([p, q]) => usageLines({ ...p, currency: cur } as UsageCharge, q));
        const scale = new D(10).pow(minorDigits(cur));
        for (const line of lines) {
          expect(Number.isSafeInteger(line.amount)).toBe(true);
          expect(line.amount).toBe(halfUpMinor(exactOfLine(line), cur));
          expect(new D(line.amount).minus(exactOfLine(line).times(scale)).abs().lte(0.5)).toBe(true);
        }
        const total = sumAmounts(lines);
        expect(total).toBe(lines.map((l) => l.amount).reduce((a, b) => a + b, 0));
        const exactTotal = lines.reduce((s, l) => s.plus(exactOfLine(l)), new D(0)).times(scale);
        expect(new D(total).minus(exactTotal).abs().lte(new D(0.5).times(lines.length))).toBe(true);
      }),
      runs,
    );
  });
});
