import fc from 'fast-check';
import type { BillingCycle, BillingPeriod, Period } from './domain';
import { billingSchedule } from './schedule';

/**
 * Walks 10 years of periods and checks them against an oracle of its own: the UTC offset comes
 * from Intl's "longOffset" zone name (not from the module's wall-time arithmetic), and the wall
 * time each period must start at is worked out here from the rule.
 */
const ZONES = Intl.supportedValuesOf('timeZone');
const DST_ZONES = ['America/New_York', 'Europe/Berlin', 'Australia/Lord_Howe', 'America/Santiago', 'America/Havana', 'Pacific/Apia', 'Pacific/Chatham', 'Asia/Tehran', 'Europe/London', 'America/Sao_Paulo'];
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

const offsetFormats = new Map<string, Intl.DateTimeFormat>();
const offsets = new Map<string, number>();
function offsetOf(instant: number, zone: string): number {
  const key = `${zone} ${instant}`;
  if (!offsets.has(key)) {
    if (offsets.size > 1000) offsets.clear();
    offsets.set(key, readOffset(instant, zone));
  }
  return offsets.get(key) as number;
}

function readOffset(instant: number, zone: string): number {
  if (!offsetFormats.has(zone)) offsetFormats.set(zone, new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'longOffset' }));
  const text = (offsetFormats.get(zone) as Intl.DateTimeFormat).format(instant);
  const m = / GMT(?:([+-])(\d{2}):(\d{2})(?::(\d{2}))?)?$/.exec(text);
  if (!m) throw new Error(`unexpected offset in ${text}`);
  if (!m[1]) return 0;
  return (m[1] === '-' ? -1 : 1) * ((Number(m[2]) * 60 + Number(m[3])) * 60 + Number(m[4] ?? 0)) * 1000;
}

/** The wall time of an instant as a number: ms since the epoch as if the wall clock were UTC. */
const wallOf = (instant: number, zone: string) => instant + offsetOf(instant, zone);

/** The wall time the rule gives for period k (k >= 1), from the first period's wall time. */
function expectedWall(origin: Date, period: BillingPeriod, count: number, k: number): number {
  const days = { DAILY: 1, WEEKLY: 7 } as Record<string, number>;
  if (period in days) return origin.getTime() + k * count * days[period] * DAY;
  const months = k * count * { MONTHLY: 1, QUARTERLY: 3, ANNUAL: 12 }[period as 'MONTHLY'];
  const y = origin.getUTCFullYear();
  const m = origin.getUTCMonth() + months;
  const lastDay = new Date(Date.UTC(y, m + 1, 0)).getUTCDate();
  return Date.UTC(y, m, Math.min(origin.getUTCDate(), lastDay), origin.getUTCHours(), origin.getUTCMinutes(), origin.getUTCSeconds(), origin.getUTCMilliseconds());
}

/** The start of the calendar unit holding a wall time (as a UTC-read wall value). */
function calendarOrigin(wall: number, period: BillingPeriod): Date {
  const d = new Date(wall);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth();
  switch (period) {
    case 'DAILY':
      return new Date(Date.UTC(y, m, d.getUTCDate()));
    case 'WEEKLY':
      return new Date(Date.UTC(y, m, d.getUTCDate() - ((d.getUTCDay() + 6) % 7)));
    case 'MONTHLY':
      return new Date(Date.UTC(y, m, 1));
    case 'QUARTERLY':
      return new Date(Date.UTC(y, m - (m % 3), 1));
    case 'ANNUAL':
      return new Date(Date.UTC(y, 0, 1));
  }
}

/**
 * Does `instant` start at wall time `wall` by the rule? Either it shows that wall time and no
 * earlier instant of the last day does (an overlap takes the earlier one), or the wall time
 * was skipped by a DST jump in the day before and the instant is that wall time moved forward
 * by the jump.
 */
function startsAt(instant: number, wall: number, zone: string): boolean {
  const fellBack = offsetOf(instant - DAY, zone) - offsetOf(instant, zone);
  if (wallOf(instant, zone) === wall) return !(fellBack > 0 && wallOf(instant - fellBack, zone) === wall);
  const jump = offsetOf(instant, zone) - offsetOf(instant - DAY, zone);
  // skipped: read an instant `jump` earlier, the old offset shows `wall - jump` (under the
  // new offset it would show `wall` itself, and `wall` would have existed)
  return jump > 0 && wallOf(instant, zone) - wall === jump && wallOf(instant - jump, zone) === wall - jump;
}

const rule = fc.record({
  start: fc.date({ min: new Date('1995-01-01T00:00:00Z'), max: new Date('2035-12-31T00:00:00Z'), noInvalidDate: true }),
  zone: fc.oneof(fc.constantFrom(...DST_ZONES), fc.constantFrom(...ZONES)),
  period: fc.constantFrom<BillingPeriod>('DAILY', 'WEEKLY', 'MONTHLY', 'QUARTERLY', 'ANNUAL'),
  count: fc.oneof(fc.constant(1), fc.integer({ min: 1, max: 4 })),
  cycle: fc.constantFrom<BillingCycle>('anniversary', 'calendar'),
});

describe('10 years of periods, random anchors and time zones', () => {
  it('are contiguous, never overlap or empty, and each starts at the wall time the rule gives', () => {
    fc.assert(
      fc.property(rule, ({ start, zone, period, count, cycle }) => {
        const schedule = billingSchedule({ start, billingPeriod: period, billingPeriodCount: count, billingCycle: cycle, timezone: zone });
        const startWall = wallOf(start.getTime(), zone);
        const origin = cycle === 'anniversary' ? new Date(startWall) : calendarOrigin(startWall, period);
        const first = schedule.first();
        expect(first.start).toEqual(start);
        if (cycle === 'calendar' && first.proration) {
          const { wholeStart, wholeEnd, factor } = first.proration;
          expect(startsAt(wholeStart.getTime(), origin.getTime(), zone)).toBe(true);
          expect(wholeEnd).toEqual(first.end);
          const exact = (first.end.getTime() - start.getTime()) / (wholeEnd.getTime() - wholeStart.getTime());
          expect(Math.abs(Number(factor) - exact)).toBeLessThan(1e-11);
          expect(Number(factor)).toBeGreaterThan(0);
          expect(Number(factor)).toBeLessThan(1);
        } else {
          expect(first.proration).toBeUndefined();
        }
        const until = start.getTime() + 10 * 365.25 * DAY;
        let previous: Period = first;
        let k = 1;
        while (previous.end.getTime() < until) {
          const next = schedule.next(previous);
          expect(next.start).toEqual(previous.end);
          expect(next.end.getTime()).toBeGreaterThan(next.start.getTime());
          expect(next.proration).toBeUndefined();
          let wall = expectedWall(origin, period, count, k);
          if (!startsAt(next.start.getTime(), wall, zone)) {
            // a wall time that never happened maps onto the next one: its empty period is left out
            expect(startsAt(next.start.getTime(), expectedWall(origin, period, count, k + 1), zone)).toBe(true);
            k++;
            wall = expectedWall(origin, period, count, k);
          }
          expect(startsAt(next.start.getTime(), wall, zone)).toBe(true);
          previous = next;
          k++;
        }
        const middle = new Date((start.getTime() + until) / 2);
        const held = schedule.periodAt(middle);
        expect(held.start.getTime()).toBeLessThanOrEqual(middle.getTime());
        expect(held.end.getTime()).toBeGreaterThan(middle.getTime());
      }),
      { numRuns: 100 },
    );
  }, 600_000); // about 15 s of CPU: generous for a loaded machine
});
