import { ValidationError } from '@billstream/errors';
import type { Subscription } from './domain';
import { activate, cancel, nextStep, pause, resume, start, stepsUntil } from './lifecycle';

const NOW = new Date('2026-03-10T12:00:00Z');

function sub(overrides: Partial<Subscription> = {}): Subscription {
  const base: Subscription = {
    id: 'sub_1',
    tenantId: 't',
    environmentId: 'e',
    customerId: 'cust_1',
    invoicingCustomerId: null,
    planId: 'plan_1',
    currency: 'usd',
    billingPeriod: 'MONTHLY',
    billingPeriodCount: 1,
    billingCycle: 'anniversary',
    timezone: 'UTC',
    status: 'draft',
    startDate: null,
    billingAnchor: null,
    currentPeriodStart: null,
    currentPeriodEnd: null,
    trialPeriodDays: null,
    trialEnd: null,
    paymentTermsDays: 0,
    cancelAtPeriodEnd: false,
    cancelledAt: null,
    pausedAt: null,
    commitmentAmount: null,
    priceOverrides: [],
    usageThresholds: [],
    lastChangeAt: null,
    pendingChange: null,
    metadata: {},
    version: 1,
    createdAt: NOW,
    updatedAt: NOW,
  };
  return { ...base, ...overrides };
}

const active = () => start(sub(), new Date('2026-03-01T00:00:00Z'), new Date('2026-03-01T00:00:00Z'), NOW);
const states: Record<string, () => Subscription> = {
  draft: () => sub(),
  trialing: () => start(sub({ trialPeriodDays: 30 }), NOW, NOW, NOW),
  active,
  paused: () => pause(active(), NOW).subscription,
  cancelled: () => cancel(active(), NOW, 'immediately').subscription,
};
const actions: Record<string, (s: Subscription) => unknown> = {
  activate: (s) => activate(s, NOW).subscription.status,
  pause: (s) => pause(s, NOW).subscription.status,
  resume: (s) => resume(s, NOW).subscription.status,
  'cancel immediately': (s) => cancel(s, NOW, 'immediately').subscription.status,
  'cancel end_of_period': (s) => cancel(s, NOW, 'end_of_period').subscription.cancelAtPeriodEnd,
};

/** The transition table of docs/api/billing.md: the resulting status, or 400. */
const TABLE: Record<string, Record<string, unknown>> = {
  draft: { activate: 'active', pause: 400, resume: 400, 'cancel immediately': 'cancelled', 'cancel end_of_period': 400 },
  trialing: { activate: 400, pause: 400, resume: 400, 'cancel immediately': 'cancelled', 'cancel end_of_period': true },
  active: { activate: 400, pause: 'paused', resume: 400, 'cancel immediately': 'cancelled', 'cancel end_of_period': true },
  paused: { activate: 400, pause: 400, resume: 'active', 'cancel immediately': 'cancelled', 'cancel end_of_period': 400 },
  cancelled: { activate: 400, pause: 400, resume: 400, 'cancel immediately': 400, 'cancel end_of_period': 400 },
};

describe('subscription state machine', () => {
  for (const [state, row] of Object.entries(TABLE)) {
    for (const [action, expected] of Object.entries(row)) {
      it(`${state} + ${action} -> ${String(expected)}`, () => {
        const run = () => actions[action](states[state]());
        if (expected === 400) {
          expect(run).toThrow(ValidationError);
          try {
            run();
          } catch (err) {
            expect((err as ValidationError).details).toMatchObject({ field: 'status', status: state });
          }
        } else {
          expect(run()).toBe(expected);
        }
      });
    }
  }

  it('cancel at the period end is refused the second time', () => {
    const once = cancel(active(), NOW, 'end_of_period').subscription;
    expect(() => cancel(once, NOW, 'end_of_period')).toThrow(ValidationError);
  });

  it('activating a draft with trial days starts the trial now, whatever its start_date', () => {
    const { subscription } = activate(sub({ trialPeriodDays: 7, startDate: new Date('2026-01-01T00:00:00Z') }), NOW);
    expect([subscription.status, subscription.currentPeriodStart, subscription.trialEnd]).toEqual([
      'trialing',
      NOW,
      new Date('2026-03-17T12:00:00Z'),
    ]);
  });

  it('pause closes the period now; resume anchors a new run of periods at the resume time', () => {
    const paused = pause(active(), NOW).subscription;
    expect(paused.currentPeriodEnd).toEqual(NOW);
    const later = new Date('2026-04-20T08:00:00Z');
    const resumed = resume(paused, later).subscription;
    expect([resumed.billingAnchor, resumed.currentPeriodStart, resumed.currentPeriodEnd, resumed.pausedAt]).toEqual([
      later,
      later,
      new Date('2026-05-20T08:00:00Z'),
      null,
    ]);
  });

  it('steps nothing before the period end and every missed period after it', () => {
    const s = active();
    expect(nextStep(s, new Date('2026-03-31T23:59:59Z'))).toBeUndefined();
    const steps = stepsUntil(s, new Date('2026-06-01T00:00:00Z'));
    expect(steps.map((x) => x.closed.start.toISOString())).toEqual([
      '2026-03-01T00:00:00.000Z',
      '2026-04-01T00:00:00.000Z',
      '2026-05-01T00:00:00.000Z',
    ]);
    expect(steps.at(-1)!.subscription.currentPeriodStart).toEqual(new Date('2026-06-01T00:00:00Z'));
  });

  it('a calendar subscription in Europe/Berlin steps at local month starts', () => {
    const s = start(sub({ billingCycle: 'calendar', timezone: 'Europe/Berlin' }), new Date('2026-03-10T12:00:00Z'), NOW, NOW);
    expect(s.currentPeriodEnd).toEqual(new Date('2026-03-31T22:00:00Z'));
    const [step] = stepsUntil(s, new Date('2026-04-02T00:00:00Z'));
    expect(step.subscription.currentPeriodEnd).toEqual(new Date('2026-04-30T22:00:00Z'));
  });
});
