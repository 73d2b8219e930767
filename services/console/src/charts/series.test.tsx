import { describe, expect, it } from '@jest/globals';
import { align, buckets, lastDays, lastHours, moneyByCurrency, windowSeries } from './series';

describe('chart data shaping', () => {
  it('puts a meter\'s windows on every day of the range, 0 where the API had none', () => {
    const s = windowSeries('Calls', [{ start: '2026-11-26T00:00:00.000Z', value: '6' }, { start: '2026-11-28T00:00:00.000Z', value: '2.5' }], '2026-11-25T00:00:00.000Z', '2026-11-28T10:30:00.000Z', 'DAY');
    const day = (d: string) => Date.parse(`2026-11-${d}T00:00:00Z`) / 1000;
    expect(s).toEqual({ label: 'Calls', points: [{ at: day('25'), value: 0 }, { at: day('26'), value: 6 }, { at: day('27'), value: 0 }, { at: day('28'), value: 2.5 }] });
  });

  it('aligns series on the union of their times, ascending, adding points of the same time', () => {
    const a = { label: 'a', points: [{ at: 30, value: 1 }, { at: 10, value: 2 }] };
    const b = { label: 'b', points: [{ at: 20, value: 5 }, { at: 30, value: 1 }, { at: 30, value: 2 }] };
    expect(align([a, b])).toEqual({ times: [10, 20, 30], values: [[2, 0, 1], [0, 5, 3]] });
    expect(align([])).toEqual({ times: [], values: [] });
  });

  it('counts hourly and daily buckets from the start of the first one, in UTC', () => {
    expect(buckets('2026-11-28T08:20:00Z', '2026-11-28T10:05:00Z', 'HOUR').map((t) => new Date(t * 1000).toISOString())).toEqual(['2026-11-28T08:00:00.000Z', '2026-11-28T09:00:00.000Z', '2026-11-28T10:00:00.000Z']);
    const now = new Date('2026-11-28T10:05:00Z');
    expect(lastDays(3, now)).toEqual({ from: '2026-11-26T00:00:00.000Z', to: '2026-11-28T10:05:00.000Z' });
    expect(lastHours(24, now)).toEqual({ from: '2026-11-27T11:00:00.000Z', to: '2026-11-28T10:05:00.000Z' });
    expect(buckets(lastHours(24, now).from, now.toISOString(), 'HOUR')).toHaveLength(24);
  });

  it('splits invoiced and collected per day by currency, never adding currencies, 0 on days without a row', () => {
    const days = [
      { date: '2026-11-27', currency: 'usd', invoiced: 2500, collected: 0 },
      { date: '2026-11-28', currency: 'usd', invoiced: 0, collected: 1000 },
      { date: '2026-11-28', currency: 'eur', invoiced: 700, collected: 700 },
    ];
    const day = (d: string) => Date.parse(`2026-11-${d}T00:00:00Z`) / 1000;
    expect(moneyByCurrency(days, '2026-11-26T00:00:00.000Z', '2026-11-28T09:00:00.000Z')).toEqual([
      { currency: 'eur', data: { times: [day('26'), day('27'), day('28')], values: [[0, 0, 700], [0, 0, 700]] } },
      { currency: 'usd', data: { times: [day('26'), day('27'), day('28')], values: [[0, 2500, 0], [0, 0, 1000]] } },
    ]);
  });
});
