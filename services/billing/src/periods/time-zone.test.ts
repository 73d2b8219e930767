import fc from 'fast-check';
import { ValidationError } from '@billstream/errors';
import { assertTimeZone, instantOf, localAt } from './time-zone';

const wall = (year: number, month: number, day: number, hour = 0, minute = 0, second = 0, millisecond = 0) => ({ year, month, day, hour, minute, second, millisecond });
const iso = (ms: number) => new Date(ms).toISOString();

describe('time zones', () => {
  it('accepts IANA names and rejects anything else with a ValidationError on timezone', () => {
    for (const ok of ['UTC', 'Europe/Berlin', 'America/Argentina/Buenos_Aires', 'Etc/GMT+5', 'Asia/Kolkata', 'America/Port-au-Prince']) expect(assertTimeZone(ok)).toBe(ok);
    for (const bad of ['', 'Mars/Olympus', 'Europe/Berlinn', '+05:00', '-03:00', 'UTC+1', '05:00', 'Europe/../Berlin', ' UTC']) {
      let thrown: unknown;
      try {
        assertTimeZone(bad);
      } catch (err) {
        thrown = err;
      }
      expect(thrown).toBeInstanceOf(ValidationError);
      expect((thrown as ValidationError).details).toEqual({ field: 'timezone' });
    }
  });

  it('reads the wall time of an instant, milliseconds included', () => {
    expect(localAt(Date.parse('2024-07-01T12:34:56.789Z'), 'Europe/Berlin')).toEqual(wall(2024, 7, 1, 14, 34, 56, 789));
    expect(localAt(Date.parse('2024-01-01T00:00:00Z'), 'America/New_York')).toEqual(wall(2023, 12, 31, 19));
    expect(localAt(Date.parse('2024-01-01T00:00:00Z'), 'Asia/Kathmandu')).toEqual(wall(2024, 1, 1, 5, 45));
  });

  it("reads a UTC zone's wall time from the instant itself, as Intl reads it", () => {
    const intl = (instant: number, timeZone: string) => {
      const parts = Object.fromEntries(
        new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' })
          .formatToParts(instant)
          .map((p) => [p.type, Number(p.value)]),
      );
      return wall(parts.year!, parts.month!, parts.day!, parts.hour!, parts.minute!, parts.second!, ((instant % 1000) + 1000) % 1000);
    };
    fc.assert(
      fc.property(fc.integer({ min: Date.parse('1970-01-01T00:00:00Z'), max: Date.parse('2200-01-01T00:00:00Z') }), fc.constantFrom('UTC', 'Etc/UTC', 'GMT', 'Etc/GMT', 'Zulu'), (instant, zone) => {
        expect(localAt(instant, zone)).toEqual(intl(instant, zone));
      }),
      { numRuns: 2000 },
    );
  });

  it('finds the instant of a wall time, in winter and in summer', () => {
    expect(iso(instantOf(wall(2024, 1, 15, 9), 'Europe/Berlin'))).toBe('2024-01-15T08:00:00.000Z');
    expect(iso(instantOf(wall(2024, 7, 15, 9, 0, 0, 250), 'Europe/Berlin'))).toBe('2024-07-15T07:00:00.250Z');
    expect(iso(instantOf(wall(2024, 7, 15, 9), 'UTC'))).toBe('2024-07-15T09:00:00.000Z');
  });

  it('moves a wall time a DST gap skips forward by the gap: 02:30 -> 03:30', () => {
    expect(iso(instantOf(wall(2024, 3, 10, 2, 30), 'America/New_York'))).toBe('2024-03-10T07:30:00.000Z'); // 03:30 EDT
    expect(iso(instantOf(wall(2024, 3, 31, 2, 0), 'Europe/Berlin'))).toBe('2024-03-31T01:00:00.000Z'); // 03:00 CEST
    expect(iso(instantOf(wall(2024, 9, 8, 0, 0), 'America/Santiago'))).toBe('2024-09-08T04:00:00.000Z'); // midnight skipped: 01:00 -03
    expect(iso(instantOf(wall(2011, 12, 30, 10), 'Pacific/Apia'))).toBe('2011-12-30T20:00:00.000Z'); // the skipped day: Dec 31 10:00 +14
  });

  it('takes the earlier instant of a wall time a DST overlap repeats', () => {
    expect(iso(instantOf(wall(2024, 11, 3, 1, 30), 'America/New_York'))).toBe('2024-11-03T05:30:00.000Z'); // 01:30 EDT, not EST
    expect(iso(instantOf(wall(2024, 10, 27, 2, 30), 'Europe/Berlin'))).toBe('2024-10-27T00:30:00.000Z'); // 02:30 CEST
    expect(iso(instantOf(wall(2024, 4, 7, 1, 45), 'Australia/Lord_Howe'))).toBe('2024-04-06T14:45:00.000Z'); // half-hour DST: 01:45 +11, not +10:30
  });
});
