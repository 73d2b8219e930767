import { billingSchedule, type Period } from '../periods';
import type { Subscription } from '../subscriptions/domain';
import type { Binding, CreditGrant } from './domain';

const DAY_MS = 86_400_000;
/** A 10-year daily backdating is 3,650 periods; beyond this many something is wrong with the rule. */
const MAX_PERIODS = 100_000;

export type GrantRule = Pick<CreditGrant, 'cadence' | 'period' | 'archivedAt'>;
export type Cursor = Pick<Binding, 'startsFrom' | 'appliedThrough'>;

/**
 * The grant's periods of a subscription, in order (pure): the trial, when it has one, is one
 * period; then the current run of periods from `billingAnchor` (its start, trial end or last
 * resume), cut by the grant's period (default: the subscription's billing period and count)
 * in the subscription's cycle and time zone, as its own periods are cut (ADR 0013, 0015).
 */
function* candidates(s: Subscription, grant: GrantRule): Generator<Period> {
  if (s.trialEnd && (s.trialPeriodDays ?? 0) > 0) {
    yield { start: new Date(s.trialEnd.getTime() - s.trialPeriodDays! * DAY_MS), end: s.trialEnd };
  }
  if (!s.billingAnchor) return;
  const schedule = billingSchedule({
    start: s.billingAnchor,
    billingPeriod: grant.period ?? s.billingPeriod,
    billingPeriodCount: grant.period ? 1 : s.billingPeriodCount,
    billingCycle: s.billingCycle,
    timezone: s.timezone,
  });
  for (let p = schedule.first(), n = 0; n < MAX_PERIODS; p = schedule.next(p), n++) yield p;
}

const min = (a: number, b: number) => (a < b ? a : b);

/**
 * Until when (exclusive) the subscription entered periods: now while active or trialing (the
 * end of the current period when it cancels there), the pause or the cancel otherwise; and
 * until when it will (for the next due period).
 */
function limits(s: Subscription, now: Date): { entered: number; future: number } {
  if (s.status === 'active' || s.status === 'trialing') {
    const stop = s.cancelAtPeriodEnd && s.currentPeriodEnd ? s.currentPeriodEnd.getTime() : Infinity;
    return { entered: min(now.getTime() + 1, stop), future: stop };
  }
  const stopped = min(s.pausedAt?.getTime() ?? Infinity, s.cancelledAt?.getTime() ?? Infinity);
  if (s.status === 'draft') return { entered: -Infinity, future: -Infinity };
  return { entered: stopped, future: stopped };
}

/**
 * The periods of `grant` that the subscription entered up to `now` while active or trialing and
 * that the cursor has not recorded yet (ONETIME: its first period only, once), and the start of
 * the next period that will be due (null: none). An archived grant grants no period starting
 * at or after its archiving.
 */
export function duePeriods(s: Subscription, grant: GrantRule, cursor: Cursor, now: Date): { periods: Period[]; nextDue: Date | null } {
  const archived = grant.archivedAt?.getTime() ?? Infinity;
  const { entered, future } = limits(s, now);
  const until = min(entered, archived);
  const ends = min(future, archived);
  const from = cursor.startsFrom?.getTime() ?? -Infinity;
  const after = cursor.appliedThrough?.getTime() ?? -Infinity;
  if (grant.cadence === 'ONETIME' && cursor.appliedThrough) return { periods: [], nextDue: null };
  const periods: Period[] = [];
  for (const p of candidates(s, grant)) {
    const start = p.start.getTime();
    if (start < from || start <= after) continue;
    if (start >= until) return { periods, nextDue: start < ends ? p.start : null };
    periods.push(p);
    if (grant.cadence === 'ONETIME') return { periods, nextDue: null };
  }
  return { periods, nextDue: null };
}

/** The start of the grant's period that holds `now` (where a grant made on a running subscription starts), if the subscription entered one. */
export function currentPeriodStart(s: Subscription, grant: GrantRule, now: Date): Date | null {
  const { periods } = duePeriods(s, { ...grant, cadence: 'RECURRING' }, { startsFrom: null, appliedThrough: null }, now);
  return periods.at(-1)?.start ?? null;
}

/** The grant's period of the subscription that holds `at` (any status but draft), if one does. */
export function grantPeriodAt(s: Subscription, grant: GrantRule, at: Date): Period | undefined {
  const t = at.getTime();
  for (const p of candidates(s, grant)) {
    if (p.start.getTime() > t) return undefined;
    if (p.end.getTime() > t) return p;
  }
  return undefined;
}
