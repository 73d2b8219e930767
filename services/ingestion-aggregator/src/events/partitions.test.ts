import { monthBounds, monthOf, monthsAround, partitionName } from './partitions';

describe('event partitions by month', () => {
  it('names and bounds a month', () => {
    expect(monthOf('2026-12-31T23:59:59.999999Z')).toBe('2026-12');
    expect(partitionName('2026-12')).toBe('events_y2026m12');
    expect(monthBounds('2026-12')).toEqual({ from: '2026-12-01T00:00:00Z', to: '2027-01-01T00:00:00Z' });
    expect(monthBounds('2026-02')).toEqual({ from: '2026-02-01T00:00:00Z', to: '2026-03-01T00:00:00Z' });
  });

  it('lists the months around now', () => {
    expect(monthsAround(new Date('2026-11-26T00:00:00Z'), 1, 2)).toEqual(['2026-10', '2026-11', '2026-12', '2027-01']);
  });
});
