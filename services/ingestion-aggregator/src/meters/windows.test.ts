import { ValidationError } from '@billstream/errors';
import { MAX_WINDOWS, windowsOf } from './service';

describe('windowsOf', () => {
  it('cuts whole UTC hours, clipping the first and last to the range', () => {
    expect(windowsOf('2026-01-01T10:30:00.000000Z', '2026-01-01T12:15:00.000000Z', 'HOUR')).toEqual([
      { key: '2026-01-01T10:00:00.000000Z', start: '2026-01-01T10:30:00.000000Z', end: '2026-01-01T11:00:00.000000Z' },
      { key: '2026-01-01T11:00:00.000000Z', start: '2026-01-01T11:00:00.000000Z', end: '2026-01-01T12:00:00.000000Z' },
      { key: '2026-01-01T12:00:00.000000Z', start: '2026-01-01T12:00:00.000000Z', end: '2026-01-01T12:15:00.000000Z' },
    ]);
  });

  it('cuts whole UTC days', () => {
    expect(windowsOf('2026-01-01T00:00:00.000000Z', '2026-01-03T00:00:00.000000Z', 'DAY').map((w) => [w.start, w.end])).toEqual([
      ['2026-01-01T00:00:00.000000Z', '2026-01-02T00:00:00.000000Z'],
      ['2026-01-02T00:00:00.000000Z', '2026-01-03T00:00:00.000000Z'],
    ]);
  });

  it('refuses ranges of more windows than the limit', () => {
    expect(() => windowsOf('2020-01-01T00:00:00.000000Z', '2026-01-01T00:00:00.000000Z', 'HOUR')).toThrow(ValidationError);
    expect(windowsOf('2026-01-01T00:00:00.000000Z', '2026-01-01T00:00:00.000000Z', 'DAY')).toEqual([]);
    expect(windowsOf('2026-01-01T00:00:00.000000Z', '2027-02-21T16:00:00.000000Z', 'HOUR')).toHaveLength(MAX_WINDOWS);
  });
});
