import type { Subscription } from '../subscriptions/domain';
import { currentPeriodStart, duePeriods, type GrantRule } from './schedule';

const at = (iso: string) => new Date(iso);
const starts = (r: { periods: Array<{ start: Date }> }) => r.periods.map((p) => p.start.toISOString());

function subscription(overrides: Partial<Subscription>): Subscription {
  return {
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
    status: 'active',
    startDate: at('2026-01-31T10:00:00Z'),
    billingAnchor: at('2026-01-31T10:00:00Z'),
    currentPeriodStart: at('2026-01-31T10:00:00Z'),
    currentPeriodEnd: at('2026-02-28T10:00:00Z'),
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
    createdAt: at('2026-01-31T10:00:00Z'),
    updatedAt: at('2026-01-31T10:00:00Z'),
    ...overrides,
  };
}

const recurring: GrantRule = { cadence: 'RECURRING', period: null, archivedAt: null };
const fresh = { startsFrom: null, appliedThrough: null };

describe("duePeriods (a subscription's grant periods, pure)", () => {
  it('follows the subscription periods (month ends clamped to the anchor day) up to now, and names the next one', () => {
    const r = duePeriods(subscription({}), recurring, fresh, at('2026-04-01T00:00:00Z'));
    expect(starts(r)).toEqual(['2026-01-31T10:00:00.000Z', '2026-02-28T10:00:00.000Z', '2026-03-31T10:00:00.000Z']);
    expect(r.nextDue).toEqual(at('2026-04-30T10:00:00Z'));
  });

  it('skips what the cursor recorded and what starts before starts_from', () => {
    const now = at('2026-04-01T00:00:00Z');
    expect(starts(duePeriods(subscription({}), recurring, { startsFrom: null, appliedThrough: at('2026-02-28T10:00:00Z') }, now))).toEqual(['2026-03-31T10:00:00.000Z']);
    expect(starts(duePeriods(subscription({}), recurring, { startsFrom: at('2026-02-28T10:00:00Z'), appliedThrough: null }, now))).toEqual([
      '2026-02-28T10:00:00.000Z',
      '2026-03-31T10:00:00.000Z',
    ]);
  });

  it('a trial is one period, then the billed run from its end; a grant period of its own cuts the run', () => {
    const trialEnd = at('2026-01-15T00:00:00Z');
    const s = subscription({ status: 'trialing', trialPeriodDays: 14, trialEnd, billingAnchor: trialEnd, currentPeriodStart: at('2026-01-01T00:00:00Z'), currentPeriodEnd: trialEnd });
    expect(starts(duePeriods(s, recurring, fresh, at('2026-01-10T00:00:00Z')))).toEqual(['2026-01-01T00:00:00.000Z']);
    expect(starts(duePeriods(s, { ...recurring, period: 'WEEKLY' }, fresh, at('2026-01-28T23:59:59Z')))).toEqual([
      '2026-01-01T00:00:00.000Z',
      '2026-01-15T00:00:00.000Z',
      '2026-01-22T00:00:00.000Z',
    ]);
  });

  it('stops at a pause, a cancel, the end of a period it cancels at, and an archive', () => {
    const now = at('2026-06-01T00:00:00Z');
    const paused = subscription({ status: 'paused', pausedAt: at('2026-03-01T00:00:00Z') });
    expect([starts(duePeriods(paused, recurring, fresh, now)), duePeriods(paused, recurring, fresh, now).nextDue]).toEqual([
      ['2026-01-31T10:00:00.000Z', '2026-02-28T10:00:00.000Z'],
      null,
    ]);
    const cancelled = subscription({ status: 'cancelled', cancelledAt: at('2026-02-28T10:00:00Z') });
    expect(starts(duePeriods(cancelled, recurring, fresh, now))).toEqual(['2026-01-31T10:00:00.000Z']);
    const ending = subscription({ cancelAtPeriodEnd: true });
    expect(duePeriods(ending, recurring, fresh, at('2026-02-01T00:00:00Z'))).toEqual({ periods: [expect.anything()], nextDue: null });
    const archived = { ...recurring, archivedAt: at('2026-03-01T00:00:00Z') };
    expect(starts(duePeriods(subscription({}), archived, fresh, now))).toEqual(['2026-01-31T10:00:00.000Z', '2026-02-28T10:00:00.000Z']);
    expect(duePeriods(subscription({ status: 'draft', billingAnchor: null }), recurring, fresh, now)).toEqual({ periods: [], nextDue: null });
  });

  it('ONETIME: the first period only, once', () => {
    const onetime: GrantRule = { cadence: 'ONETIME', period: null, archivedAt: null };
    const now = at('2026-04-01T00:00:00Z');
    expect(duePeriods(subscription({}), onetime, fresh, now)).toEqual({ periods: [{ start: at('2026-01-31T10:00:00Z'), end: at('2026-02-28T10:00:00Z') }], nextDue: null });
    expect(duePeriods(subscription({}), onetime, { startsFrom: null, appliedThrough: at('2026-01-31T10:00:00Z') }, now)).toEqual({ periods: [], nextDue: null });
  });

  it('currentPeriodStart: the grant period holding now', () => {
    expect(currentPeriodStart(subscription({}), recurring, at('2026-03-15T00:00:00Z'))).toEqual(at('2026-02-28T10:00:00Z'));
    expect(currentPeriodStart(subscription({ billingPeriod: 'DAILY' }), recurring, at('2026-02-02T12:00:00Z'))).toEqual(new Date(at('2026-02-02T10:00:00Z').getTime()));
  });
});
