import { ValidationError } from '@billstream/errors';
import type { Period, ScheduleRule } from './domain';
import { anniversaryGrid, calendarGrid, gridIndexNear, gridPoint } from './grid';
import { prorationFactor } from './proration';
import { assertTimeZone, instantOf, localAt } from './time-zone';

export interface BillingSchedule {
  /** The first period, from the start; a calendar one that starts mid-period carries its proration. */
  first(): Period;
  /** The period right after one: it starts where that one ends. */
  next(period: Period): Period;
  /** The period holding an instant at or after the start. */
  periodAt(instant: Date): Period;
}

/**
 * A subscription's periods: half-open, contiguous, never empty, cut in its time zone. Period
 * k >= 1 starts at the wall time the rule gives (ADR 0013 for wall times a DST change skips
 * or repeats); when two of them map to one instant (a skipped local day), the empty period
 * between them is left out.
 */
export function billingSchedule(rule: ScheduleRule): BillingSchedule {
  const timeZone = assertTimeZone(rule.timezone);
  const anchor = rule.start.getTime();
  if (!Number.isFinite(anchor)) throw new ValidationError('start_date is not a valid date', { field: 'start_date' });
  if (!Number.isInteger(rule.billingPeriodCount) || rule.billingPeriodCount < 1) {
    throw new ValidationError('billing_period_count must be a whole number of 1 or more', { field: 'billing_period_count' });
  }
  const startLocal = localAt(anchor, timeZone);
  const makeGrid = rule.billingCycle === 'calendar' ? calendarGrid : anniversaryGrid;
  const grid = makeGrid(startLocal, rule.billingPeriod, rule.billingPeriodCount);
  const recent = new Map<number, number>();
  const boundary = (k: number): number => {
    if (k === 0) return anchor;
    let at = recent.get(k);
    if (at === undefined) {
      if (recent.size >= 8) recent.clear();
      at = instantOf(gridPoint(grid, k), timeZone);
      recent.set(k, at);
    }
    return at;
  };

  /** The first boundary after an instant, and its index (boundaries never decrease with k). */
  function boundaryAfter(instant: number): { k: number; at: number } {
    let k = Math.max(1, gridIndexNear(grid, localAt(instant, timeZone)) - 1);
    while (k > 1 && boundary(k - 1) > instant) k--;
    while (boundary(k) <= instant) k++;
    return { k, at: boundary(k) };
  }

  function first(): Period {
    const end = boundaryAfter(anchor).at;
    const wholeStart = instantOf(grid.origin, timeZone);
    if (rule.billingCycle !== 'calendar' || wholeStart >= anchor) return { start: new Date(anchor), end: new Date(end) };
    return {
      start: new Date(anchor),
      end: new Date(end),
      proration: { factor: prorationFactor(end - anchor, end - wholeStart), wholeStart: new Date(wholeStart), wholeEnd: new Date(end) },
    };
  }

  return {
    first,
    next: (period) => ({ start: period.end, end: new Date(boundaryAfter(period.end.getTime()).at) }),
    periodAt(instant) {
      const at = instant.getTime();
      if (!(at >= anchor)) throw new RangeError(`${instant.toISOString()} is before the schedule's start ${rule.start.toISOString()}`);
      const { k, at: end } = boundaryAfter(at);
      return k === 1 ? first() : { start: new Date(boundary(k - 1)), end: new Date(end) };
    },
  };
}
