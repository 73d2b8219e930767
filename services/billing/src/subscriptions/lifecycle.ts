import { ValidationError } from '@billstream/errors';
import { billingSchedule, type Period } from '../periods';
import { SUBSCRIPTION_EVENTS, type CancelAt, type PendingChange, type Subscription, type SubscriptionEventType } from './domain';

/**
 * The subscription state machine (docs/api/billing.md#states) as pure functions: each takes a
 * subscription and the time, and answers the changed subscription with the event announcing
 * it, or a ValidationError for a transition the state does not allow.
 */
export interface Change {
  subscription: Subscription;
  event: SubscriptionEventType;
}

/** A period the subscription left: where the invoice of its ARREAR charges (issue #13) will be made. */
export interface PeriodStep extends Change {
  closed: Period;
  /** The pending plan change this step applies (docs/api/plan-changes.md): the next period bills its prices. */
  applied?: PendingChange;
}

const DAY_MS = 86_400_000;

function illegal(s: Subscription, action: string): ValidationError {
  return new ValidationError(`Cannot ${action} a subscription that is ${s.status}`, { field: 'status', status: s.status, subscription_id: s.id });
}

function scheduleFrom(s: Subscription, anchor: Date) {
  return billingSchedule({
    start: anchor,
    billingPeriod: s.billingPeriod,
    billingPeriodCount: s.billingPeriodCount,
    billingCycle: s.billingCycle,
    timezone: s.timezone,
  });
}

/** Periods anchored at `anchor`, the first one current. */
export function runFrom(s: Subscription, anchor: Date, at: Date): Subscription {
  const first = scheduleFrom(s, anchor).first();
  return { ...s, status: 'active', billingAnchor: anchor, currentPeriodStart: first.start, currentPeriodEnd: first.end, lastChangeAt: null, updatedAt: at };
}

/**
 * Starts billing: a trial of `trialPeriodDays` from `trialStart` (its period is the trial),
 * else periods from `billingStart`. The caller catches up periods that already ended.
 */
export function start(s: Subscription, billingStart: Date, trialStart: Date, at: Date): Subscription {
  const days = s.trialPeriodDays ?? 0;
  if (days <= 0) return runFrom({ ...s, startDate: billingStart }, billingStart, at);
  const trialEnd = new Date(trialStart.getTime() + days * DAY_MS);
  return {
    ...s,
    status: 'trialing',
    startDate: billingStart,
    trialEnd,
    billingAnchor: trialEnd,
    currentPeriodStart: trialStart,
    currentPeriodEnd: trialEnd,
    updatedAt: at,
  };
}

/** draft -> trialing or active, starting now (or at its start_date, when it has one). */
export function activate(s: Subscription, now: Date): Change {
  if (s.status !== 'draft') throw illegal(s, 'activate');
  return { subscription: start(s, s.startDate ?? now, now, now), event: SUBSCRIPTION_EVENTS.activated };
}

/** active -> paused: the current period closes now. */
export function pause(s: Subscription, now: Date): Change {
  if (s.status !== 'active') throw illegal(s, 'pause');
  return { subscription: { ...s, status: 'paused', pausedAt: now, currentPeriodEnd: now, updatedAt: now }, event: SUBSCRIPTION_EVENTS.paused };
}

/** paused -> active: a new run of periods starts now. */
export function resume(s: Subscription, now: Date): Change {
  if (s.status !== 'paused') throw illegal(s, 'resume');
  return { subscription: { ...runFrom(s, now, now), pausedAt: null }, event: SUBSCRIPTION_EVENTS.resumed };
}

/**
 * Immediately from draft, trialing, active or paused (a running period closes now); at the end
 * of the period only from trialing or active, once.
 */
export function cancel(s: Subscription, now: Date, when: CancelAt): Change {
  if (when === 'end_of_period') {
    if (s.status !== 'active' && s.status !== 'trialing') throw illegal(s, 'cancel at the end of the period');
    if (s.cancelAtPeriodEnd) throw illegal(s, 'cancel at the end of the period again');
    return { subscription: { ...s, cancelAtPeriodEnd: true, pendingChange: null, updatedAt: now }, event: SUBSCRIPTION_EVENTS.updated };
  }
  if (s.status === 'cancelled') throw illegal(s, 'cancel');
  const running = s.status === 'active' || s.status === 'trialing';
  return {
    subscription: { ...s, status: 'cancelled', cancelledAt: now, currentPeriodEnd: running ? now : s.currentPeriodEnd, pendingChange: null, updatedAt: now },
    event: SUBSCRIPTION_EVENTS.cancelled,
  };
}

/**
 * The step at the end of the current period, when it ended at or before `now`: a trial turns
 * active (periods from the trial end), a subscription cancelling at the period end is
 * cancelled, any other one moves to its next period. Undefined when nothing is due.
 */
export function nextStep(s: Subscription, now: Date): PeriodStep | undefined {
  if ((s.status !== 'active' && s.status !== 'trialing') || !s.currentPeriodStart || !s.currentPeriodEnd) return undefined;
  if (s.currentPeriodEnd.getTime() > now.getTime()) return undefined;
  const closed: Period = { start: s.currentPeriodStart, end: s.currentPeriodEnd };
  if (s.cancelAtPeriodEnd) {
    return { subscription: { ...s, status: 'cancelled', cancelledAt: closed.end, pendingChange: null, updatedAt: now }, event: SUBSCRIPTION_EVENTS.cancelled, closed };
  }
  const pending = s.pendingChange && s.pendingChange.effectiveAt.getTime() <= closed.end.getTime() ? s.pendingChange : undefined;
  if (pending) return { ...appliedAtPeriodEnd(s, pending, closed, now), closed, applied: pending };
  if (s.status === 'trialing') {
    return { subscription: runFrom(s, s.trialEnd ?? closed.end, now), event: SUBSCRIPTION_EVENTS.updated, closed };
  }
  const next = scheduleFrom(s, s.billingAnchor ?? closed.start).next(closed);
  return { subscription: { ...s, currentPeriodStart: next.start, currentPeriodEnd: next.end, lastChangeAt: null, updatedAt: now }, event: SUBSCRIPTION_EVENTS.updated, closed };
}

/**
 * A pending change applied at the end of `closed`: the new plan's terms; the same billing period
 * goes on in the same schedule, another one anchors a new run of periods at the period end (a
 * closed trial: at the trial end, as the trial's end would).
 */
function appliedAtPeriodEnd(s: Subscription, p: PendingChange, closed: Period, now: Date): Change {
  const swapped: Subscription = {
    ...s,
    planId: p.planId,
    billingPeriod: p.billingPeriod,
    billingPeriodCount: p.billingPeriodCount,
    priceOverrides: p.priceOverrides,
    commitmentAmount: p.commitmentAmount,
    usageThresholds: p.usageThresholds ?? s.usageThresholds,
    pendingChange: null,
    lastChangeAt: null,
  };
  const sameRun = s.status === 'active' && p.billingPeriod === s.billingPeriod && p.billingPeriodCount === s.billingPeriodCount;
  if (!sameRun) return { subscription: runFrom(swapped, s.status === 'trialing' ? (s.trialEnd ?? closed.end) : closed.end, now), event: SUBSCRIPTION_EVENTS.updated };
  const next = scheduleFrom(s, s.billingAnchor ?? closed.start).next(closed);
  return { subscription: { ...swapped, currentPeriodStart: next.start, currentPeriodEnd: next.end, updatedAt: now }, event: SUBSCRIPTION_EVENTS.updated };
}

/** Every step due up to `now`, in order (a backdated subscription has one per past period). */
export function stepsUntil(s: Subscription, now: Date): PeriodStep[] {
  const steps: PeriodStep[] = [];
  let current = s;
  for (let step = nextStep(current, now); step; step = nextStep(current, now)) {
    steps.push(step);
    current = step.subscription;
  }
  return steps;
}
