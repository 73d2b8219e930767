import { addDays, addMonthsClamped, civilMs, DAY_MS, isoWeekday } from './civil';
import type { BillingPeriod, LocalDateTime } from './domain';

/**
 * The wall times periods start at: origin + k x step days or months. Month steps keep the
 * origin's day of month, clamped to each month's end (Jan 31 -> Feb 28 -> Mar 31).
 */
export interface Grid {
  origin: LocalDateTime;
  unit: 'day' | 'month';
  step: number;
}

const STEPS: Record<BillingPeriod, { unit: 'day' | 'month'; size: number }> = {
  DAILY: { unit: 'day', size: 1 },
  WEEKLY: { unit: 'day', size: 7 },
  MONTHLY: { unit: 'month', size: 1 },
  QUARTERLY: { unit: 'month', size: 3 },
  ANNUAL: { unit: 'month', size: 12 },
};

/** Anniversary: from the start's own wall time (day of month and time of day). */
export function anniversaryGrid(start: LocalDateTime, period: BillingPeriod, count: number): Grid {
  return { origin: start, unit: STEPS[period].unit, step: STEPS[period].size * count };
}

/** Calendar: from the start of the local day, ISO week (Monday), month, quarter or year holding the start. */
export function calendarGrid(start: LocalDateTime, period: BillingPeriod, count: number): Grid {
  const midnight = { ...start, hour: 0, minute: 0, second: 0, millisecond: 0 };
  const origins: Record<BillingPeriod, LocalDateTime> = {
    DAILY: midnight,
    WEEKLY: addDays(midnight, 1 - isoWeekday(midnight)),
    MONTHLY: { ...midnight, day: 1 },
    QUARTERLY: { ...midnight, month: Math.floor((start.month - 1) / 3) * 3 + 1, day: 1 },
    ANNUAL: { ...midnight, month: 1, day: 1 },
  };
  return { origin: origins[period], unit: STEPS[period].unit, step: STEPS[period].size * count };
}

export function gridPoint(grid: Grid, k: number): LocalDateTime {
  return grid.unit === 'day' ? addDays(grid.origin, k * grid.step) : addMonthsClamped(grid.origin, k * grid.step);
}

/** About the index of the last grid point at or before a wall time (exact up to one step). */
export function gridIndexNear(grid: Grid, local: LocalDateTime): number {
  if (grid.unit === 'day') return Math.floor((civilMs(local) - civilMs(grid.origin)) / DAY_MS / grid.step);
  return Math.floor(((local.year - grid.origin.year) * 12 + (local.month - grid.origin.month)) / grid.step);
}
