import type { LocalDateTime } from './domain';

/**
 * Calendar arithmetic on wall-clock values, done as if they were UTC (the proleptic Gregorian
 * calendar of `Date`, which has no DST): days and months without any time zone.
 */
export const DAY_MS = 86_400_000;

/** Milliseconds of a wall-clock value read as UTC: a day number with a time, for arithmetic only. */
export function civilMs(local: LocalDateTime): number {
  const date = new Date(0);
  date.setUTCFullYear(local.year, local.month - 1, local.day);
  date.setUTCHours(local.hour, local.minute, local.second, local.millisecond);
  return date.getTime();
}

export function fromCivilMs(ms: number): LocalDateTime {
  const date = new Date(ms);
  return {
    year: date.getUTCFullYear(),
    month: date.getUTCMonth() + 1,
    day: date.getUTCDate(),
    hour: date.getUTCHours(),
    minute: date.getUTCMinutes(),
    second: date.getUTCSeconds(),
    millisecond: date.getUTCMilliseconds(),
  };
}

export function daysInMonth(year: number, month: number): number {
  return fromCivilMs(civilMs({ year, month: month + 1, day: 0, hour: 0, minute: 0, second: 0, millisecond: 0 })).day;
}

export function addDays(local: LocalDateTime, days: number): LocalDateTime {
  return fromCivilMs(civilMs(local) + days * DAY_MS);
}

/** The same day of month `months` later, clamped to the month's last day (Jan 31 + 1 month = Feb 28/29). */
export function addMonthsClamped(local: LocalDateTime, months: number, dayOfMonth = local.day): LocalDateTime {
  const index = local.year * 12 + (local.month - 1) + months;
  const year = Math.floor(index / 12);
  const month = index - year * 12 + 1;
  return { ...local, year, month, day: Math.min(dayOfMonth, daysInMonth(year, month)) };
}

/** ISO weekday: Monday 1 ... Sunday 7. */
export function isoWeekday(local: LocalDateTime): number {
  const weekday = new Date(civilMs({ ...local, hour: 0, minute: 0, second: 0, millisecond: 0 })).getUTCDay();
  return weekday === 0 ? 7 : weekday;
}
