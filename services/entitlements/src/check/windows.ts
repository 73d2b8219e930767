import type { UsageResetPeriod } from '@billstream/contracts';
import type { GrantingSubscription } from '../projection/domain';

/** A usage window: half-open [start, end); end null when usage never resets. */
export interface UsageWindow {
  start: Date;
  end: Date | null;
}

/**
 * The current window of a reset period for one subscription at `now`: BILLING_PERIOD is the
 * subscription's current period; DAILY and MONTHLY are the UTC calendar day and month; NEVER
 * runs from the subscription's start (a subscription without a period yet counts from its start too).
 */
export function resetWindow(period: UsageResetPeriod, s: Pick<GrantingSubscription, 'startDate' | 'createdAt' | 'currentPeriodStart' | 'currentPeriodEnd'>, now: Date): UsageWindow {
  const since = s.startDate ?? s.createdAt;
  switch (period) {
    case 'BILLING_PERIOD':
      return s.currentPeriodStart && s.currentPeriodEnd ? { start: s.currentPeriodStart, end: s.currentPeriodEnd } : { start: since, end: null };
    case 'DAILY': {
      const start = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
      return { start: new Date(start), end: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1)) };
    }
    case 'MONTHLY':
      return { start: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)), end: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)) };
    case 'NEVER':
      return { start: since, end: null };
  }
}

/** Where usage counts from when several grants meet: the latest start; it resets at the earliest end. */
export function combinedWindow(windows: UsageWindow[]): UsageWindow {
  let start = windows[0].start;
  let end: Date | null = null;
  for (const w of windows) {
    if (w.start > start) start = w.start;
    if (w.end && (!end || w.end < end)) end = w.end;
  }
  return { start, end };
}
