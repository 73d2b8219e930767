import { ServiceUnavailableError, ValidationError } from '@billstream/errors';
import type { NewPrice } from '../prices/domain';
import { CTX, monthlyFixed, startBillingHarness, type BillingHarness } from '../testing/harness';
import type { Allocation, AllocationRequest, Wallets } from '../clients/wallets/domain';

/**
 * The period job in batches (issue #13's close speed): usage read with one aggregator call per
 * batch, allocations with one wallet call per chunk, numbers taken per chunk; still exactly one
 * invoice per subscription and period, finalized once, numbered without a gap, on three replicas
 * at once; and the one-by-one paths when the wallet refuses a batch or is down.
 */

/**
 * The wallet service's allocation as the test needs it: customers in `credit` have a PRE_PAID
 * wallet that pays up to its minor units on USAGE lines; every invoice is allocated once (a
 * repeat answers the stored result), as the real one.
 */
class FakeWallets implements Pick<Wallets, 'allocate' | 'allocateMany'> {
  readonly credit = new Map<string, number>();
  readonly stored = new Map<string, Allocation>();
  readonly calls = { allocate: 0, allocateMany: 0 };
  /** Invoices allocated one by one. */
  readonly alone = new Set<string>();
  /** A batch holding an invoice of these customers is refused with a 409 (one by one they are allocated). */
  readonly refuse = new Set<string>();
  /** The wallet is down for invoices of these customers (batches holding one, and single calls). */
  readonly down = new Set<string>();

  private one(invoiceId: string, r: AllocationRequest): Allocation {
    const known = this.stored.get(invoiceId);
    if (known) return known;
    let left = this.credit.get(r.customer_id) ?? 0;
    const lines: Array<{ id: string; amount: number }> = [];
    for (const l of r.lines) {
      if (l.price_type !== 'USAGE' || left === 0) continue;
      const amount = Math.min(left, l.amount);
      if (amount === 0) continue;
      lines.push({ id: l.id, amount });
      left -= amount;
    }
    const total = lines.reduce((n, l) => n + l.amount, 0);
    this.credit.set(r.customer_id, left);
    const allocation: Allocation = {
      invoice_id: invoiceId,
      status: 'allocated',
      prepaid: total === 0 ? null : { wallet_id: `w-${r.customer_id}`, transaction_id: `t-${invoiceId}`, credits: String(total / 100), amount: total, lines },
      postpaid: null,
    };
    this.stored.set(invoiceId, allocation);
    return allocation;
  }
  async allocate(_scope: unknown, invoiceId: string, r: AllocationRequest): Promise<Allocation> {
    this.calls.allocate += 1;
    if (this.down.has(r.customer_id)) throw new ServiceUnavailableError('wallet down');
    this.alone.add(invoiceId);
    return this.one(invoiceId, r);
  }
  async allocateMany(_scope: unknown, invoices: Array<{ invoiceId: string; request: AllocationRequest }>): Promise<Allocation[]> {
    this.calls.allocateMany += 1;
    if (invoices.some((i) => this.down.has(i.request.customer_id))) throw new ServiceUnavailableError('wallet down');
    if (invoices.some((i) => this.refuse.has(i.request.customer_id))) throw new ValidationError('This invoice was already allocated with other lines');
    return invoices.map((i) => this.one(i.invoiceId, i.request));
  }
}

const base = { billingCycle: 'anniversary' as const, timezone: 'UTC', paymentTermsDays: 0, draft: false, metadata: {} };
const arrearFixed: NewPrice = { ...monthlyFixed, amount: '30', invoiceCadence: 'ARREAR' };
const usage: NewPrice = { ...monthlyFixed, type: 'USAGE', amount: '0.25', invoiceCadence: 'ARREAR', meterId: 'meter_calls' };

interface Row {
  id: string;
  subscription_id: string;
  status: string;
  invoice_number: string | null;
  finalized_at: Date | null;
  subtotal: string | number;
  total_prepaid_credits_applied: string | number;
}

jest.setTimeout(180_000);

describe('period job in batches (real Postgres, fake aggregator and wallet)', () => {
  let h: BillingHarness;
  const wallets = new FakeWallets();
  let planId: string;

  beforeAll(async () => {
    h = await startBillingHarness('2026-01-01T00:00:00Z', { wallets: wallets as unknown as Wallets });
    h.meters.known.set('meter_calls', '40');
    planId = (await h.service.plans.create(CTX, { name: 'P', lookupKey: null, description: null, metadata: {}, prices: [arrearFixed, usage] }, 'r')).id;
  });
  afterAll(async () => {
    await h?.stop();
  });

  async function subscribeMany(prefix: string, n: number) {
    const subs = [];
    for (let k = 0; k < n; k++) {
      const customer = await h.customer(`${prefix}${k}`);
      if (k % 2 === 0) wallets.credit.set(customer, 500);
      subs.push(await h.service.subscriptions.create(CTX, { ...base, planId, customer: { id: customer } }));
    }
    return subs;
  }
  const rowsOf = async (ids: string[]): Promise<Row[]> => h.db('invoices').whereIn('subscription_id', ids).orderBy('invoice_number');

  it('closes 250 subscriptions on three replicas at once: one invoice each, finalized once, numbers without a gap, batched calls', async () => {
    h.clock.set('2026-01-01T00:00:00Z');
    const subs = await subscribeMany('cust_b', 250);
    const before = { usage: h.meters.calls.usage, usageMany: h.meters.calls.usageMany, allocate: wallets.calls.allocate, allocateMany: wallets.calls.allocateMany };
    h.clock.set('2026-02-01T00:00:01Z');
    const replicas = [h.service, h.replica(), h.replica()];
    await Promise.all(replicas.map((r) => r.periods.runOnce()));
    await h.service.periods.runOnce();

    const rows = await rowsOf(subs.map((s) => s.id));
    expect(rows).toHaveLength(250);
    expect(new Set(rows.map((r) => r.subscription_id)).size).toBe(250);
    expect(rows.every((r) => r.status === 'finalized')).toBe(true);
    // $30 fixed + 40 calls x $0.25; half the customers had 500 cents of credits for the usage line.
    expect(rows.every((r) => Number(r.subtotal) === 4000)).toBe(true);
    expect(rows.filter((r) => Number(r.total_prepaid_credits_applied) === 500)).toHaveLength(125);
    expect(rows.filter((r) => Number(r.total_prepaid_credits_applied) === 0)).toHaveLength(125);
    // Gap-free and increasing with finalized_at (equal within one chunk).
    const numbers = rows.map((r) => Number(r.invoice_number!.split('-').at(-1)));
    expect(numbers).toEqual(Array.from({ length: 250 }, (_, k) => numbers[0]! + k));
    for (let k = 1; k < rows.length; k++) expect(rows[k]!.finalized_at!.getTime()).toBeGreaterThanOrEqual(rows[k - 1]!.finalized_at!.getTime());
    // Batched: no call per subscription or per invoice.
    expect(h.meters.calls.usage - before.usage).toBe(0);
    expect(h.meters.calls.usageMany - before.usageMany).toBeLessThanOrEqual(6);
    expect(h.meters.calls.usageMany - before.usageMany).toBeGreaterThanOrEqual(2);
    expect(wallets.calls.allocate - before.allocate).toBe(0);
    expect(wallets.calls.allocateMany - before.allocateMany).toBeLessThanOrEqual(12);
    // Each subscription moved one period, once.
    const moved = await h.db('subscriptions').whereIn('id', subs.map((s) => s.id)).select('version', 'current_period_start');
    expect(moved.every((m: { version: number; current_period_start: Date }) => m.current_period_start.toISOString() === '2026-02-01T00:00:00.000Z')).toBe(true);
  });

  it('a batch the wallet refuses (4xx) is finalized invoice by invoice; a batch it cannot take (503) waits for a later run', async () => {
    h.clock.set('2026-03-01T00:00:00Z');
    const refused = await subscribeMany('cust_r', 6);
    h.clock.set('2026-04-01T00:00:01Z');
    for (const s of refused) wallets.refuse.add(s.customerId);
    await h.service.periods.runOnce();
    const first = await rowsOf(refused.map((s) => s.id));
    expect(first.map((r) => r.status)).toEqual(Array(6).fill('finalized'));
    expect(first.every((r) => wallets.alone.has(r.id))).toBe(true);

    h.clock.set('2026-05-01T00:00:00Z');
    const waiting = await subscribeMany('cust_w', 4);
    h.clock.set('2026-06-01T00:00:01Z');
    for (const s of waiting) wallets.down.add(s.customerId);
    await h.service.periods.runOnce();
    const drafts = await rowsOf(waiting.map((s) => s.id));
    expect(drafts.map((r) => r.status)).toEqual(Array(4).fill('draft'));
    // The wallet answers again; the drafts' claims expire (the lease), a later run finalizes each once.
    wallets.down.clear();
    await h.db('invoices').whereIn('id', drafts.map((r) => r.id)).update({ work_lease_until: null });
    await h.service.periods.runOnce();
    const done = await rowsOf(waiting.map((s) => s.id));
    expect(done.map((r) => r.status)).toEqual(Array(4).fill('finalized'));
  });
});
