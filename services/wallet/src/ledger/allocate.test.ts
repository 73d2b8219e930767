import { Exact } from '@billstream/money';
import fc from 'fast-check';
import type { Decimal } from 'decimal.js';
import type { SpendableCredit } from '../entries/domain';
import { allocate, spendingOrder } from './allocate';

const D = (v: string | number) => new Exact(v);
const DAY = 86_400_000;
const T0 = Date.UTC(2026, 0, 1);

function credit(id: string, available: string, extra: Partial<SpendableCredit> = {}): SpendableCredit {
  return { id, creditsAvailable: D(available), priority: null, expiryDate: null, createdAt: new Date(T0), ...extra };
}

const view = (takes: Array<{ id: string; take: Decimal; left: Decimal }>) => takes.map((t) => [t.id, t.take.toFixed(), t.left.toFixed()]);

describe('allocate (which credits a debit consumes)', () => {
  it('takes lower priority first, then the earlier expiry, then the older credit, and the last one only in part', () => {
    const credits = [
      credit('c_old', '10', { createdAt: new Date(T0) }),
      credit('c_later', '10', { expiryDate: new Date(T0 + 20 * DAY), createdAt: new Date(T0 + 1) }),
      credit('c_sooner', '10', { expiryDate: new Date(T0 + 5 * DAY), createdAt: new Date(T0 + 2) }),
      credit('c_prio2', '10', { priority: 2, createdAt: new Date(T0 + 3) }),
      credit('c_prio1', '10', { priority: 1, expiryDate: new Date(T0 + 30 * DAY), createdAt: new Date(T0 + 4) }),
      credit('c_newer', '10', { createdAt: new Date(T0 + 5) }),
    ];
    const a = allocate(credits, D('45'));
    expect(view(a.takes)).toEqual([
      ['c_prio1', '10', '0'],
      ['c_prio2', '10', '0'],
      ['c_sooner', '10', '0'],
      ['c_later', '10', '0'],
      ['c_old', '5', '5'],
    ]);
    expect(a.shortfall.toFixed()).toBe('0');
    expect(credits.map((c) => c.creditsAvailable.toFixed())).toEqual(['10', '10', '10', '10', '10', '10']);
  });

  it('puts a priority of 0 before 1 and no priority last; the id breaks a tie of time', () => {
    const sorted = [
      credit('c_b', '1'),
      credit('c_none', '1', { createdAt: new Date(T0 - DAY) }),
      credit('c_p0', '1', { priority: 0, createdAt: new Date(T0 + DAY) }),
      credit('c_a', '1'),
    ].sort(spendingOrder);
    expect(sorted.map((c) => c.id)).toEqual(['c_p0', 'c_none', 'c_a', 'c_b']);
  });

  it('skips empty credits, reports what the credits cannot cover, and is exact to 18 digits', () => {
    const a = allocate([credit('c_empty', '0'), credit('c_1', '0.000000000000000001'), credit('c_2', '0.1')], D('0.2'));
    expect(view(a.takes)).toEqual([
      ['c_1', '0.000000000000000001', '0'],
      ['c_2', '0.1', '0'],
    ]);
    expect(a.shortfall.toFixed()).toBe('0.099999999999999999');
    expect(allocate([], D('1')).shortfall.toFixed()).toBe('1');
  });

  it('properties: never over-spends, spends in order, and the sums match', () => {
    const spendable = fc.record({
      available: fc.integer({ min: 0, max: 50_000 }),
      priority: fc.option(fc.integer({ min: 0, max: 3 })),
      expiresInDays: fc.option(fc.integer({ min: 1, max: 5 })),
      createdAt: fc.integer({ min: 0, max: 5 }),
    });
    fc.assert(
      fc.property(fc.array(spendable, { maxLength: 12 }), fc.integer({ min: 1, max: 400_000 }), (rows, amountMilli) => {
        const credits = rows.map((r, i) =>
          credit(`c_${String(i).padStart(2, '0')}`, D(r.available).dividedBy(1000).toFixed(), {
            priority: r.priority,
            expiryDate: r.expiresInDays === null ? null : new Date(T0 + r.expiresInDays * DAY),
            createdAt: new Date(T0 + r.createdAt),
          }),
        );
        const amount = D(amountMilli).dividedBy(1000);
        const total = credits.reduce((s, c) => s.plus(c.creditsAvailable), D(0));
        const { takes, shortfall } = allocate(credits, amount);
        const byId = new Map(credits.map((c) => [c.id, c]));
        const taken = takes.reduce((s, t) => s.plus(t.take), D(0));
        // Never over-spends: no credit gives more than it holds, the debit gets no more than it asked.
        for (const t of takes) {
          const c = byId.get(t.id)!;
          expect(t.take.greaterThan(0) && t.take.lessThanOrEqualTo(c.creditsAvailable)).toBe(true);
          expect(t.left.equals(c.creditsAvailable.minus(t.take))).toBe(true);
        }
        expect(taken.lessThanOrEqualTo(amount)).toBe(true);
        // Sums match: what is taken plus what is missing is the amount; it is all there is when short.
        expect(taken.plus(shortfall).equals(amount)).toBe(true);
        expect(shortfall.equals(amount.greaterThan(total) ? amount.minus(total) : 0)).toBe(true);
        // In order: takes follow the spending order, and every credit before the last take is emptied.
        const order = [...credits].sort(spendingOrder).filter((c) => !c.creditsAvailable.isZero());
        expect(takes.map((t) => t.id)).toEqual(order.slice(0, takes.length).map((c) => c.id));
        for (const t of takes.slice(0, -1)) expect(t.left.isZero()).toBe(true);
        for (let i = 1; i < order.length; i += 1) expect(spendingOrder(order[i - 1], order[i])).toBeLessThan(0);
      }),
      { numRuns: 500 },
    );
  });
});
