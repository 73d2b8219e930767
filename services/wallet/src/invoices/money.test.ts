import { Exact } from '@billstream/money';
import type { InvoiceLine } from './domain';
import { allows, creditsFor, minorPerCredit, postpaidDue, prepaidApplications, worthInMinor } from './money';

const D = (v: string | number) => new Exact(v);
const line = (id: string, priceType: 'USAGE' | 'FIXED', amount: number): InvoiceLine => ({ id, priceType, amount: D(amount) });

describe('invoice credit arithmetic (ADR 0016)', () => {
  it('is worth floor(credits x rate x 10^exponent) minor units', () => {
    expect(worthInMinor(D('7.666666666666'), minorPerCredit(D(3), 0)).toFixed()).toBe('22');
    expect(worthInMinor(D('0.015'), minorPerCredit(D(1), 2)).toFixed()).toBe('1');
    expect(worthInMinor(D('1'), minorPerCredit(D('0.5'), 3)).toFixed()).toBe('500');
  });

  it('debits amount / (rate x 10^exponent) credits rounded up to 12 decimals, at most the usable credits', () => {
    expect(creditsFor(D(7), minorPerCredit(D(3), 0), D(100)).toFixed()).toBe('2.333333333334');
    expect(creditsFor(D(1001), minorPerCredit(D(3), 3), D(100)).toFixed()).toBe('0.333666666667');
    expect(creditsFor(D(250), minorPerCredit(D(1), 2), D(100)).toFixed()).toBe('2.5');
    expect(creditsFor(D(1), minorPerCredit(D(3), 0), D('0.333333333333333334')).toFixed()).toBe('0.333333333333333334');
  });

  it('never debits less than the amount is worth', () => {
    for (const [amount, rate, exponent] of [
      [1, '3', 0],
      [99, '7', 2],
      [12345, '0.000003', 3],
      [1, '1.123456789012345678', 2],
    ] as const) {
      const perCredit = minorPerCredit(D(rate), exponent);
      expect(creditsFor(D(amount), perCredit, D('1e30')).times(perCredit).greaterThanOrEqualTo(amount)).toBe(true);
    }
  });

  it('allows a line type when the wallet lists it or ALL', () => {
    expect(allows(['USAGE'], 'USAGE')).toBe(true);
    expect(allows(['USAGE'], 'FIXED')).toBe(false);
    expect(allows(['ALL'], 'FIXED')).toBe(true);
    expect(allows(['FIXED', 'USAGE'], 'USAGE')).toBe(true);
  });

  it('applies prepaid credits line by line in order until they run out, and leaves the rest to postpaid', () => {
    const lines = [line('a', 'USAGE', 300), line('b', 'FIXED', 1000), line('c', 'USAGE', 500), line('d', 'USAGE', 100)];
    const applied = prepaidApplications(lines, ['USAGE'], D(700));
    expect(applied.map((a) => [a.id, a.amount.toNumber()])).toEqual([
      ['a', 300],
      ['c', 400],
    ]);
    expect(postpaidDue(lines, ['ALL'], applied).toNumber()).toBe(1200);
    expect(postpaidDue(lines, ['USAGE'], applied).toNumber()).toBe(200);
    expect(prepaidApplications(lines, ['ALL'], D(0))).toEqual([]);
  });
});
