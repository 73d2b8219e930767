import type { UnbilledUsageBody } from '@billstream/contracts';
import type { NewPrice } from '../prices/domain';
import { CTX, ENVIRONMENT, TENANT, monthlyFixed, startBillingHarness, type BillingHarness } from '../testing/harness';
import type { Wallets } from '../clients/wallets/domain';

/**
 * What billing reports as unbilled usage (ADR 0024), on real Postgres with a fake aggregator
 * (40 calls per window) and a fake wallet service that records the reports: the current
 * period's usage lines only (not FIXED charges), plus the usage lines of drafts of ended
 * periods, per currency; the sweep finds customers without any notification.
 */
const arrearFixed: NewPrice = { ...monthlyFixed, amount: '30', invoiceCadence: 'ARREAR' };
const usage: NewPrice = { ...monthlyFixed, type: 'USAGE', amount: '0.25', invoiceCadence: 'ARREAR', meterId: 'meter_calls' };
const base = { billingCycle: 'anniversary' as const, timezone: 'UTC', paymentTermsDays: 0, draft: false, metadata: {} };
const SCOPE = { tenantId: TENANT, environmentId: ENVIRONMENT };

describe('unbilled usage reports (real Postgres, fake aggregator and wallet)', () => {
  let h: BillingHarness;
  const reports: UnbilledUsageBody[] = [];
  let planId: string;

  beforeAll(async () => {
    const wallets = { reportUnbilled: async (_scope: unknown, body: UnbilledUsageBody) => void reports.push(body) };
    h = await startBillingHarness('2026-01-01T00:00:00Z', { wallets: wallets as unknown as Wallets });
    h.meters.known.set('meter_calls', '40');
    planId = (await h.service.plans.create(CTX, { name: 'P', lookupKey: null, description: null, metadata: {}, prices: [arrearFixed, usage] }, 'r')).id;
  });
  afterAll(async () => {
    await h?.service.unbilled.stop();
    await h?.stop();
  });

  const reported = (customerId: string) => reports.flatMap((r) => r.customers.filter((c) => c.customer_id === customerId).map((c) => ({ as_of: r.as_of, ...c })));

  it('a sweep reports every customer with a running usage subscription: the current period usage lines, no FIXED charge', async () => {
    h.clock.set('2026-01-01T00:00:00Z');
    const customer = await h.customer('cust_u1');
    await h.service.subscriptions.create(CTX, { ...base, planId, customer: { id: customer } });
    h.clock.set('2026-01-10T00:00:00Z');
    await h.service.unbilled.sweep();
    await h.service.unbilled.flush();
    // 40 calls x $0.25 = 1000 cents; the $30 ARREAR fixed charge is not usage.
    expect(reported(customer)).toEqual([{ as_of: '2026-01-10T00:00:00.000Z', customer_id: customer, amounts: [{ currency: 'usd', amount: 1000, invoices: [] }] }]);
  });

  it('an ended period counts through its draft (usage lines only) beside the new current period, and a notification by external id reports it', async () => {
    h.clock.set('2026-01-01T00:00:00Z');
    const customer = await h.customer('cust_u2');
    const sub = await h.service.subscriptions.create(CTX, { ...base, planId, customer: { id: customer } });
    h.clock.set('2026-02-01T00:00:05Z');
    await h.service.invoiceEndedPeriods(sub.id, 'r');
    const [draft] = await h.db('invoices').where({ subscription_id: sub.id, status: 'draft', billing_reason: 'SUBSCRIPTION_CYCLE' });
    expect(Number(draft.subtotal)).toBe(1000 + 3000);
    h.service.unbilled.touch(SCOPE, { externalIds: ['ext-cust_u2'] });
    await h.service.unbilled.flush();
    expect(reported(customer).at(-1)).toEqual({
      as_of: '2026-02-01T00:00:05.000Z',
      customer_id: customer,
      amounts: [{ currency: 'usd', amount: 1000, invoices: [{ invoice_id: draft.id, amount: 1000 }] }],
    });
    // Once the draft is no longer a draft, it is not reported any more.
    await h.db('invoices').where({ id: draft.id }).update({ status: 'voided', voided_at: new Date(), refund_state: 'done' });
    h.clock.set('2026-02-01T00:00:06Z');
    h.service.unbilled.touch(SCOPE, { customerIds: [customer] });
    await h.service.unbilled.flush();
    expect(reported(customer).at(-1)!.amounts).toEqual([{ currency: 'usd', amount: 1000, invoices: [] }]);
  });

  it('a customer without a running subscription or draft is reported with no amounts (its wallets go to 0)', async () => {
    const customer = await h.customer('cust_u3');
    h.service.unbilled.touch(SCOPE, { customerIds: [customer] });
    await h.service.unbilled.flush();
    expect(reported(customer).at(-1)).toMatchObject({ customer_id: customer, amounts: [] });
  });
});
