import type { NewPrice } from '../prices/domain';
import { CTX, monthlyFixed, startBillingHarness, type BillingHarness } from '../testing/harness';

/**
 * When invoices are made and what they bill (docs/api/billing.md#invoices), on the billing service
 * with a clock the test sets (real Postgres; the aggregator's usage and the customer service
 * are the harness's; finalization is proven on the whole stack in test-e2e).
 */
const base = { billingCycle: 'anniversary' as const, timezone: 'UTC', paymentTermsDays: 0, draft: false, metadata: {} };
const arrearFixed: NewPrice = { ...monthlyFixed, amount: '30', invoiceCadence: 'ARREAR' };
const usage: NewPrice = { ...monthlyFixed, type: 'USAGE', amount: '0.25', invoiceCadence: 'ARREAR', meterId: 'meter_calls' };

interface Row {
  id: string;
  billing_reason: string;
  period_start: Date;
  period_end: Date;
  subtotal: string | number;
  status: string;
}

describe('invoice making (real Postgres, a clock the test sets)', () => {
  let h: BillingHarness;

  beforeAll(async () => {
    h = await startBillingHarness('2026-01-01T00:00:00Z');
    h.meters.known.set('meter_calls', '40');
  });
  afterAll(async () => {
    await h?.stop();
  });

  async function plan(prices: NewPrice[], billingPeriod: NewPrice['billingPeriod'] = 'MONTHLY') {
    const p = await h.service.plans.create(
      CTX,
      { name: 'P', lookupKey: null, description: null, metadata: {}, prices: prices.map((x) => ({ ...x, billingPeriod })) },
      'r',
    );
    return p.id;
  }
  async function subscribe(customer: string, planId: string, extra: Record<string, unknown> = {}) {
    await h.customer(customer);
    return h.service.subscriptions.create(CTX, { ...base, planId, customer: { id: customer }, ...extra });
  }
  const invoices = async (subscriptionId: string): Promise<Row[]> =>
    h.db('invoices').where({ subscription_id: subscriptionId }).orderBy([{ column: 'period_start' }, { column: 'billing_reason' }]);
  const summary = (rows: Row[]) => rows.map((r) => [r.billing_reason, r.period_start.toISOString().slice(0, 10), Number(r.subtotal)]);

  it('bills nothing during a trial; its end starts the first billed period with SUBSCRIPTION_CREATE', async () => {
    h.clock.set('2026-02-01T00:00:00Z');
    const s = await subscribe('cust_t1', await plan([monthlyFixed, usage]), { trialPeriodDays: 14 });
    expect(s.status).toBe('trialing');
    expect(await invoices(s.id)).toEqual([]);
    h.clock.set('2026-02-15T00:00:01Z');
    await h.service.periods.runOnce();
    expect(summary(await invoices(s.id))).toEqual([['SUBSCRIPTION_CREATE', '2026-02-15', 1000]]);
    h.clock.set('2026-03-15T00:00:01Z');
    await h.service.periods.runOnce();
    // The first billed period closes: its usage (40 x 0.25) and the next period's fixed fee.
    expect(summary(await invoices(s.id))).toEqual([
      ['SUBSCRIPTION_CREATE', '2026-02-15', 1000],
      ['SUBSCRIPTION_CYCLE', '2026-02-15', 1000 + 1000],
    ]);
  });

  it('ends a subscription cancelled at the period end with one last invoice of its ARREAR charges only', async () => {
    h.clock.set('2026-03-01T00:00:00Z');
    const s = await subscribe('cust_c1', await plan([monthlyFixed, arrearFixed, usage]));
    await h.service.subscriptions.cancel(CTX, s.id, 'end_of_period');
    h.clock.set('2026-04-01T00:00:00Z');
    await h.service.periods.runOnce();
    expect((await h.service.subscriptions.get(CTX, s.id)).status).toBe('cancelled');
    expect(summary(await invoices(s.id))).toEqual([
      ['SUBSCRIPTION_CREATE', '2026-03-01', 1000],
      ['SUBSCRIPTION_CYCLE', '2026-03-01', 3000 + 1000],
    ]);
    h.clock.set('2026-06-01T00:00:00Z');
    await h.service.periods.runOnce();
    expect(await invoices(s.id)).toHaveLength(2);
  });

  it('prorates FIXED charges of a calendar partial first period by its seconds over the whole month', async () => {
    h.clock.set('2026-04-11T00:00:00Z');
    const s = await subscribe('cust_cal', await plan([{ ...monthlyFixed, amount: '30' }]), { billingCycle: 'calendar' });
    expect([s.currentPeriodStart?.toISOString(), s.currentPeriodEnd?.toISOString()]).toEqual(['2026-04-11T00:00:00.000Z', '2026-05-01T00:00:00.000Z']);
    const [first] = await invoices(s.id);
    // 20 of April's 30 days: 30 x 20/30 = 20.00.
    expect(summary([first])).toEqual([['SUBSCRIPTION_CREATE', '2026-04-11', 2000]]);
    const [line] = await h.db('invoice_line_items').where({ invoice_id: first.id });
    expect(line.description).toMatch(/prorated x 0\.666666666667/);
  });

  it('invoices a backdated daily subscription for each of its 30 past days at once, and never again', async () => {
    h.clock.set('2026-05-31T12:00:00Z');
    const planId = await plan([{ ...monthlyFixed, amount: '1' }, usage], 'DAILY');
    const s = await subscribe('cust_daily', planId, { startDate: new Date('2026-05-01T12:00:00Z') });
    const rows = await invoices(s.id);
    expect(rows.filter((r) => r.billing_reason === 'SUBSCRIPTION_CREATE')).toHaveLength(1);
    const cycles = rows.filter((r) => r.billing_reason === 'SUBSCRIPTION_CYCLE');
    expect(cycles).toHaveLength(30);
    expect(new Set(cycles.map((r) => r.period_start.toISOString())).size).toBe(30);
    expect(cycles.every((r) => Number(r.subtotal) === 1000 + 100)).toBe(true);
    const replicas = [h.service, h.replica(), h.replica()];
    for (let i = 0; i < 10; i++) await Promise.all(replicas.map((r) => r.periods.runOnce()));
    expect(await invoices(s.id)).toHaveLength(31);
  });

  it('replicas closing the same periods at once make one invoice per subscription, period and reason', async () => {
    h.clock.set('2026-07-01T00:00:00Z');
    const planId = await plan([monthlyFixed, usage]);
    const subs = await Promise.all(Array.from({ length: 12 }, (_, i) => subscribe(`cust_rep${i}`, planId)));
    h.clock.set('2026-10-01T00:00:01Z');
    const replicas = [h.service, h.replica(), h.replica(), h.replica()];
    await Promise.all(replicas.flatMap((r) => [r.periods.runOnce(), r.periods.runOnce()]));
    for (const s of subs) {
      expect(summary(await invoices(s.id))).toEqual([
        ['SUBSCRIPTION_CREATE', '2026-07-01', 1000],
        ['SUBSCRIPTION_CYCLE', '2026-07-01', 2000],
        ['SUBSCRIPTION_CYCLE', '2026-08-01', 2000],
        ['SUBSCRIPTION_CYCLE', '2026-09-01', 2000],
      ]);
    }
    const drafted = await h.db('outbox').whereIn('message_key', (await h.db('invoices').whereIn('subscription_id', subs.map((s) => s.id))).map((r: Row) => r.id));
    expect(drafted.filter((e: { value: string }) => JSON.parse(e.value).type === 'invoice.create.drafted')).toHaveLength(12 * 4);
  });

  it('a pause closes the period with its ARREAR charges prorated, a resume bills the new period in advance', async () => {
    h.clock.set('2026-11-01T00:00:00Z');
    const s = await subscribe('cust_pause', await plan([monthlyFixed, arrearFixed, usage]));
    h.clock.set('2026-11-16T00:00:00Z');
    await h.service.subscriptions.pause(CTX, s.id);
    h.clock.set('2026-11-20T00:00:00Z');
    const resumed = await h.service.subscriptions.resume(CTX, s.id);
    expect(resumed.currentPeriodStart?.toISOString()).toBe('2026-11-20T00:00:00.000Z');
    expect(summary(await invoices(s.id))).toEqual([
      ['SUBSCRIPTION_CREATE', '2026-11-01', 1000],
      // 15 of November's 30 days of the 30.00 ARREAR fee, and 40 x 0.25 of usage.
      ['SUBSCRIPTION_PAUSE', '2026-11-01', 1500 + 1000],
      ['SUBSCRIPTION_RESUME', '2026-11-20', 1000],
    ]);
  });
});
