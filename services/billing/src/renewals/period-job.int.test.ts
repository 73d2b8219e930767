import { CTX, monthlyFixed, startBillingHarness, type BillingHarness } from '../testing/harness';

const base = {
  planId: '',
  billingCycle: 'anniversary' as const,
  timezone: 'UTC',
  paymentTermsDays: 0,
  draft: false,
  metadata: {},
};

describe('period job (real Postgres)', () => {
  let h: BillingHarness;
  let planId: string;

  beforeAll(async () => {
    h = await startBillingHarness('2026-01-31T10:00:00Z');
    planId = (await h.service.plans.create(CTX, { name: 'Pro', lookupKey: null, description: null, metadata: {}, prices: [monthlyFixed] }, 'r'))
      .id;
  });
  afterAll(async () => {
    await h?.stop();
  });

  async function subscribe(customer: string, extra: Record<string, unknown> = {}) {
    await h.customer(customer);
    return h.service.subscriptions.create(CTX, { ...base, planId, customer: { id: customer }, ...extra });
  }

  it('moves a period that ended to the next one (month ends clamped), with one subscription.updated', async () => {
    h.clock.set('2026-01-31T10:00:00Z');
    const s = await subscribe('cust_p1');
    expect([s.currentPeriodStart?.toISOString(), s.currentPeriodEnd?.toISOString()]).toEqual(['2026-01-31T10:00:00.000Z', '2026-02-28T10:00:00.000Z']);
    h.clock.set('2026-02-28T10:00:00Z');
    await h.service.periods.runOnce();
    const moved = await h.service.subscriptions.get(CTX, s.id);
    expect([moved.currentPeriodStart?.toISOString(), moved.currentPeriodEnd?.toISOString()]).toEqual(['2026-02-28T10:00:00.000Z', '2026-03-31T10:00:00.000Z']);
    const types = (await h.events(s.id)).map((e) => e.type);
    expect(types.filter((t) => t === 'subscription.updated')).toHaveLength(1);
  });

  it('a backdated subscription starts in the period that holds now', async () => {
    h.clock.set('2026-05-10T00:00:00Z');
    const s = await subscribe('cust_p2', { startDate: new Date('2026-01-15T00:00:00Z') });
    expect([s.startDate?.toISOString(), s.currentPeriodStart?.toISOString(), s.currentPeriodEnd?.toISOString()]).toEqual([
      '2026-01-15T00:00:00.000Z',
      '2026-04-15T00:00:00.000Z',
      '2026-05-15T00:00:00.000Z',
    ]);
  });

  it('sends subscription.renewal.due once per period, notice days before its end, however many replicas run', async () => {
    h.clock.set('2026-06-01T00:00:00Z');
    const s = await subscribe('cust_p3');
    await h.service.periods.runOnce();
    expect((await h.events(s.id)).filter((e) => e.type === 'subscription.renewal.due')).toHaveLength(0);
    h.clock.set('2026-06-28T00:00:01Z');
    const replicas = [h.service, h.replica(), h.replica()];
    await Promise.all(replicas.flatMap((r) => [r.periods.runOnce(), r.periods.runOnce()]));
    const notices = (await h.events(s.id)).filter((e) => e.type === 'subscription.renewal.due');
    expect(notices).toHaveLength(1);
    expect(notices[0].payload.subscription).toMatchObject({ id: s.id, current_period_end: '2026-07-01T00:00:00.000Z' });
    h.clock.set('2026-07-29T00:00:00Z');
    await Promise.all(replicas.map((r) => r.periods.runOnce()));
    const after = (await h.events(s.id)).filter((e) => e.type === 'subscription.renewal.due');
    expect(after.map((e) => e.payload.subscription.current_period_end)).toEqual(['2026-07-01T00:00:00.000Z', '2026-08-01T00:00:00.000Z']);
  });

  it('replicas stepping the same due subscriptions at once step each period once', async () => {
    h.clock.set('2026-01-01T00:00:00Z');
    const subs = await Promise.all(['cust_r1', 'cust_r2', 'cust_r3', 'cust_r4'].map((c) => subscribe(c)));
    h.clock.set('2026-04-01T00:00:00Z');
    const replicas = [h.service, h.replica(), h.replica()];
    const results = await Promise.all(replicas.map((r) => r.periods.runOnce()));
    const closed = results.reduce((n, r) => n + r.periods_closed, 0);
    expect(closed).toBeGreaterThanOrEqual(subs.length * 3);
    for (const s of subs) {
      const now = await h.service.subscriptions.get(CTX, s.id);
      expect([now.currentPeriodStart?.toISOString(), now.currentPeriodEnd?.toISOString()]).toEqual(['2026-04-01T00:00:00.000Z', '2026-05-01T00:00:00.000Z']);
      expect(now.version).toBe(2);
    }
  });

  it('ends a trial at trial_end: active, periods anchored there', async () => {
    h.clock.set('2026-03-01T12:00:00Z');
    const s = await subscribe('cust_t1', { trialPeriodDays: 14 });
    expect(s.status).toBe('trialing');
    expect(s.trialEnd?.toISOString()).toBe('2026-03-15T12:00:00.000Z');
    h.clock.set('2026-03-20T00:00:00Z');
    await h.service.periods.runOnce();
    const active = await h.service.subscriptions.get(CTX, s.id);
    expect([active.status, active.currentPeriodStart?.toISOString(), active.currentPeriodEnd?.toISOString()]).toEqual([
      'active',
      '2026-03-15T12:00:00.000Z',
      '2026-04-15T12:00:00.000Z',
    ]);
  });

  it('cancels a subscription set to cancel at the period end when that end passes', async () => {
    h.clock.set('2026-02-01T00:00:00Z');
    const s = await subscribe('cust_c1');
    await h.service.subscriptions.cancel(CTX, s.id, 'end_of_period');
    h.clock.set('2026-02-27T00:00:00Z');
    await h.service.periods.runOnce();
    expect((await h.events(s.id)).some((e) => e.type === 'subscription.renewal.due')).toBe(false);
    h.clock.set('2026-03-01T00:00:00Z');
    await h.service.periods.runOnce();
    const done = await h.service.subscriptions.get(CTX, s.id);
    expect([done.status, done.cancelledAt?.toISOString()]).toEqual(['cancelled', '2026-03-01T00:00:00.000Z']);
    expect((await h.events(s.id)).map((e) => e.type)).toEqual(['subscription.created', 'subscription.updated', 'subscription.cancelled']);
  });
});
