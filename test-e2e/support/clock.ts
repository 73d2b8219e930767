/**
 * Dates for tests that run on the real clock (the stack has no clock to inject): every period
 * a test bills is computed from the instant it runs, never written as a calendar date, so that
 * the suite passes on any day of any month (also on the 28th to the 31st and at 23:59 UTC).
 */
export const DAY = 86_400_000;

/** The first instant (UTC) of the month `offset` months from the month of `now`. */
export function monthStart(offset = 0, now = Date.now()): number {
  const d = new Date(now);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + offset, 1);
}

/** `ms` as the API prints an instant: 2026-11-01T00:00:00.000Z. */
export const iso = (ms: number): string => new Date(ms).toISOString();
/** `ms` as a request date without milliseconds: 2026-11-01T00:00:00Z. */
export const isoZ = (ms: number): string => iso(ms).replace('.000Z', 'Z');
/** `ms` as a day: 2026-11-01. */
export const ymd = (ms: number): string => iso(ms).slice(0, 10);

/**
 * A MONTHLY anniversary period that holds `now` well inside it: it starts at 00:00 UTC at
 * least `daysAgo` (10 by default) and at most `daysAgo` + 4 days before `now`, on a day of
 * the month no later than the 28th (so that the next month has the same day and the period's
 * end is that day, whatever the month's length), and ends at least 28 − (`daysAgo` + 4) days
 * after `now` (at least 14 by default).
 */
export function monthlyPeriodAround(now = Date.now(), daysAgo = 10): { start: number; end: number } {
  const back = new Date(now - daysAgo * DAY);
  const y = back.getUTCFullYear();
  const m = back.getUTCMonth();
  const day = Math.min(back.getUTCDate(), 28);
  return { start: Date.UTC(y, m, day), end: Date.UTC(y, m + 1, day) };
}

/**
 * Waits out a month boundary closer than `marginMs`, so that the months a suite computes when
 * it starts are still the months when it runs (call it in beforeAll, before computing them).
 */
export async function awayFromMonthEnd(marginMs = 3 * 60_000): Promise<void> {
  await awayFrom(monthStart(1), marginMs);
}

/** Waits until `boundary` (plus a second) if it is closer than `marginMs`: a test then runs within one day, hour or month. */
export async function awayFrom(boundary: number, marginMs: number): Promise<void> {
  const left = boundary - Date.now();
  if (left >= 0 && left < marginMs) await new Promise((r) => setTimeout(r, left + 1_000));
}

/** The next 00:00 UTC, and the next whole hour (UTC), after `now`. */
export const nextUtcDay = (now = Date.now()): number => Math.floor(now / DAY) * DAY + DAY;
export const nextUtcHour = (now = Date.now()): number => Math.floor(now / 3_600_000) * 3_600_000 + 3_600_000;
