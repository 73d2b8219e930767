import type { UnbilledUsageBody } from '@billstream/contracts';
import type { Wallets } from '../clients/wallets/domain';
import type { NewPrice } from '../prices/domain';
import { CTX, ENVIRONMENT, TENANT, monthlyFixed, startBillingHarness, type BillingHarness } from '../testing/harness';

/**
 * Threshold billing exactly once (ADR 0046) on real Postgres with a fake aggregator: the period
 * job of two replicas and the usage notices' checks racing make one invoice per crossing; the
 * unbilled usage behind the real-time balance leaves out what threshold invoices billed (a
 * draft one counts as a draft, never twice).
 */
const usage: NewPrice = { ...monthlyFixed, type: 'USAGE', amount: '0.25', invoiceCadence: 'ARREAR', meterId: 'meter_thr' };
const base = { billingCycle: 'anniversary' as const, timezone: 'UTC', paymentTermsDays: 0, draft: false, metadata: {} };
const SCOPE = { tenantId: TENANT, environmentId: ENVIRONMENT };

describe('threshold billing across replicas (real Postgres, fake aggregator)', () => {
  let h: BillingHarness;
  const reports: UnbilledUsageBody[] = [];
  let planId: string;

  beforeAll(async () => {
    const wallets = { reportUnbilled: async (_scope: unknown, body: UnbilledUsageBody) => void reports.push(body) };
    h = await startBillingHarness('2026-01-01T00:00:00Z', { wallets: wallets as unknown as Wallets });
    h.meters.known.set('meter_thr', '0');
    planId = (await h.service.plans.create(CTX, { name: 'T', lookupKey: null, description: null, metadata: {}, prices: [usage] }, 'r')).id;
  });
  afterAll(async () => {
    await h?.service.unbilled.stop();
    await h?.stop();
  });

  it('two replicas and the usage notices racing make one invoice per crossing; the unbilled usage counts it once', async () => {
    const customer = await h.customer('cust_thr');
    const sub = await h.service.subscriptions.create(CTX, { ...base, planId, customer: { id: customer }, usageThresholds: [1000, 5000] });
    const replica = h.replica();
    const invoices = () => h.db('invoices').where({ subscription_id: sub.id, billing_reason: 'SUBSCRIPTION_THRESHOLD' }).orderBy('created_at');
    h.clock.set('2026-01-05T00:00:00Z');
    // 40 calls at 0.25: 1000 crosses the first threshold.
    h.meters.known.set('meter_thr', '40');
    const race = () => [h.service.periods.runOnce(), replica.periods.runOnce(), h.service.thresholds.checkCustomers(SCOPE, [customer], 'r'), replica.thresholds.check(sub.id, 'r')];
    await Promise.all([...race(), ...race()]);
    const [first, ...rest] = await invoices();
    expect(rest).toEqual([]);
    expect([first.sequence, Number(first.subtotal), first.status]).toEqual(['0', 1000, 'draft']);

    // While it is a draft the unbilled usage counts it once: as the draft.
    h.service.unbilled.touch(SCOPE, { customerIds: [customer] });
    await h.service.unbilled.flush();
    const last = () => reports.flatMap((r) => r.customers.filter((c) => c.customer_id === customer)).at(-1);
    expect(last()).toEqual({ customer_id: customer, amounts: [{ currency: 'usd', amount: 0, invoices: [{ invoice_id: first.id, amount: 1000 }] }] });

    // 240 calls: 6000 crosses the second; the new invoice bills 6000 less the 1000 billed.
    h.clock.set('2026-01-06T00:00:00Z');
    h.meters.known.set('meter_thr', '240');
    await Promise.all([...race(), ...race()]);
    const all = await invoices();
    expect(all.map((i: { sequence: string; subtotal: string }) => [i.sequence, Number(i.subtotal)])).toEqual([
      ['0', 1000],
      ['1', 5000],
    ]);
    // Threshold invoices, draft or finalized, leave their usage out of the open amount: 6000 billed of 6000.
    await h.service.periods.runOnce();
    h.service.unbilled.touch(SCOPE, { customerIds: [customer] });
    await h.service.unbilled.flush();
    expect(last()!.amounts[0]!.amount).toBe(0);
    h.meters.known.set('meter_thr', '260');
    h.service.unbilled.touch(SCOPE, { customerIds: [customer] });
    await h.service.unbilled.flush();
    expect(last()!.amounts[0]!.amount).toBe(500);
  });
});
