/** One file: every case runs on the one six-process stack started in beforeAll; another file would start another (tens of seconds on two cores). */
import { createDb, type Db } from '@billstream/db';
import { ApiClient, waitFor } from '@billstream/testing';
import { startProcessStack, TEST_ENVIRONMENT, TEST_TENANT, type ProcessStack, type Replica } from './support/stack';

/**
 * Issue #13's exactly-once guarantees on six real processes (real Postgres and Kafka), every
 * call through a gateway as a client makes it; the billing and wallet schemas are read only to
 * count and check. Crashes are SIGKILLs: from outside in the middle of a period job run, or
 * from inside at one exact step of finalization through BILLSTREAM_FAILPOINTS (ADR 0017).
 *
 * The period job's schedule is off (BILLING_INTERVAL_MS 0) except where a test turns it on by
 * restarting billing; claims last 2 s (BILLING_CLAIM_LEASE_MS) so that work a killed process
 * had claimed is taken again within the test.
 *
 * Backdated subscriptions bill their ended periods when they are created; to make the period
 * job itself close periods on many subscriptions at once, the batches start DAILY
 * subscriptions two days minus a few seconds ago: their second period ends at `t0`, a few
 * seconds after the batch is set up, for all of them at the same moment.
 */
const DAY = 86_400_000;
const JOB = { BILLING_INTERVAL_MS: '150' };
const NO_JOB = { BILLING_INTERVAL_MS: '0' };
/** Subscriptions of the two batches (the crash batch is the first CRASH customers of the race batch's shape). */
const RACE = 200;
const CRASH = 120;

interface InvoiceRow {
  id: string;
  tenant_id: string;
  environment_id: string;
  subscription_id: string;
  customer_id: string;
  billing_reason: string;
  status: string;
  period_start: Date;
  subtotal: string;
  total_prepaid_credits_applied: string;
  total: string;
  amount_due: string;
  invoice_number: string | null;
  finalized_at: Date | null;
  voided_at: Date | null;
  created_at: Date;
}

interface DebitRow {
  id: string;
  wallet_id: string;
  credit_amount: string;
  idempotency_key: string;
  transaction_reason: string;
  description: string;
}

/** Runs `fn` for 0..n-1, `width` at once; answers the results in order. */
async function pool<T>(n: number, width: number, fn: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = new Array(n);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, n) }, async () => {
      while (next < n) {
        const i = next++;
        out[i] = await fn(i);
      }
    }),
  );
  return out;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const cents = (credits: string) => Math.round(Number(credits) * 100);

/**
 * The shape of customer i of a batch: usage in its first and second period, its PRE_PAID
 * credits, and whether they pay every line (ALL) or only usage lines (the default).
 */
const shape = (i: number) => ({ p1Calls: i % 3, p2Calls: (i % 5) + 1, credits: ['0.5', '2.5', '4.5', '6.5'][i % 4]!, all: i % 7 !== 0 });

describe('invoices exactly once across processes, replicas and crashes (e2e: real processes, Postgres and Kafka)', () => {
  let stack: ProcessStack;
  let api: ApiClient;
  let billingDb: Db;
  let walletDb: Db;
  let dailyPlan: string;
  let monthlyPlan: string;
  const figures: string[] = [];

  beforeAll(async () => {
    stack = await startProcessStack({ env: { billing: { ...NO_JOB, BILLING_CLAIM_LEASE_MS: '2000' } } });
    api = stack.api;
    billingDb = createDb({ databaseUrl: stack.database.url, schema: 'billing', poolMax: 4 });
    walletDb = createDb({ databaseUrl: stack.database.url, schema: 'wallet', poolMax: 4 });
    const meter = await api.post('/v1/meters', { name: 'calls', event_name: 'api_call', aggregation: { type: 'COUNT' } });
    expect(meter.status).toBe(201);
    const daily = await api.post('/v1/plans', {
      name: 'Daily',
      prices: [
        { type: 'FIXED', currency: 'usd', amount: '1', billing_model: 'FLAT_FEE', billing_period: 'DAILY', invoice_cadence: 'ADVANCE' },
        { type: 'USAGE', currency: 'usd', amount: '0.5', billing_model: 'FLAT_FEE', billing_period: 'DAILY', invoice_cadence: 'ARREAR', meter_id: meter.body.id },
      ],
    });
    expect(daily.status).toBe(201);
    dailyPlan = daily.body.id;
    const monthly = await api.post('/v1/plans', {
      name: 'Monthly',
      prices: [{ type: 'FIXED', currency: 'usd', amount: '49', billing_model: 'FLAT_FEE', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE' }],
    });
    expect(monthly.status).toBe(201);
    monthlyPlan = monthly.body.id;
  }, 120_000);

  afterAll(async () => {
    if (figures.length > 0) process.stdout.write(`invoice exactly-once figures:\n${figures.map((f) => `  ${f}`).join('\n')}\n`);
    await billingDb?.destroy();
    await walletDb?.destroy();
    await stack?.stop();
  }, 120_000);

  // ---------------------------------------------------------------- helpers

  /** Whether billing runs its schedule now (a test that turns it on leaves it to the next beforeEach to turn off). */
  let scheduled = false;
  async function billingWith(env: typeof JOB | typeof NO_JOB): Promise<void> {
    await stack.restart('billing', env);
    scheduled = env === JOB;
  }

  // Every test starts with billing and the wallet up and the schedule off, whatever the last one left.
  beforeEach(async () => {
    if (!stack.running('wallet')) await stack.restart('wallet');
    if (!stack.running('billing') || scheduled) await billingWith(NO_JOB);
  }, 60_000);

  const cron = async (client = api) => {
    const res = await client.post('/v1/cron/bill-subscriptions', {});
    expect(res.status).toBe(200);
    return res.body as { invoices_created: number; subscriptions_billed: number; invoices_finalized: number };
  };
  const balance = async (walletId: string) => {
    const res = await api.get(`/v1/wallets/${walletId}/balance`);
    expect(res.status).toBe(200);
    return res.body.credit_balance as string;
  };
  const invoice = async (id: string) => (await billingDb<InvoiceRow>('invoices').where({ id }).first())!;
  const debitsOf = (invoiceId: string, reason = 'INVOICE_CREDIT_APPLIED'): Promise<DebitRow[]> =>
    walletDb<DebitRow>('transactions').where({ transaction_reason: reason }).where('description', 'like', `%${invoiceId}%`);
  const finalizedEvents = async (invoiceId: string) =>
    (await billingDb('outbox').where({ message_key: invoiceId })).filter((e: { value: string }) => JSON.parse(e.value).type === 'invoice.update.finalized').length;

  async function customerWithWallet(externalId: string, credits: string | null, all = true): Promise<{ customerId: string; walletId: string | null }> {
    const c = await api.post('/v1/customers', { external_customer_id: externalId });
    expect(c.status).toBe(201);
    if (credits === null) return { customerId: c.body.id, walletId: null };
    const config = all ? { config: { allowed_price_types: ['ALL'] } } : {};
    const w = await api.post('/v1/wallets', { customer_id: c.body.id, currency: 'usd', initial_credits_to_load: credits, ...config });
    if (w.status !== 201) throw new Error(`wallet of ${externalId}: ${w.status} ${w.text}`);
    return { customerId: c.body.id, walletId: w.body.id };
  }

  /** A customer with a PRE_PAID wallet of `credits` for every line and one SUBSCRIPTION_CREATE draft of 4900 (monthly plan, 49 usd ADVANCE). */
  async function oneDraft(externalId: string, credits: string | null) {
    return draftFor(await customerWithWallet(externalId, credits), credits);
  }

  /** The SUBSCRIPTION_CREATE draft of a new subscription of a customer made before (it needs billing only, not the wallet). */
  async function draftFor({ customerId, walletId }: { customerId: string; walletId: string | null }, credits: string | null) {
    const sub = await api.post('/v1/subscriptions', { customer_id: customerId, plan_id: monthlyPlan, payment_terms_days: 30 });
    expect(sub.status).toBe(201);
    const list = await api.get(`/v1/invoices?subscription_id=${sub.body.id}`);
    expect(list.body.items).toHaveLength(1);
    const draft = list.body.items[0];
    expect(draft).toMatchObject({ status: 'draft', subtotal: 4900, billing_reason: 'SUBSCRIPTION_CREATE' });
    const applied = credits === null ? 0 : Math.min(4900, cents(credits));
    return { invoiceId: draft.id as string, walletId, credits, applied };
  }

  /**
   * Every numbered invoice of the tenant: numbers 1..n with no gap, increasing in finalized_at
   * order, and the counter at n. Answers n.
   */
  async function numbersAreGapFree(): Promise<number> {
    const rows = await billingDb<InvoiceRow>('invoices')
      .where({ tenant_id: TEST_TENANT, environment_id: TEST_ENVIRONMENT })
      .whereNotNull('invoice_number')
      .orderBy([{ column: 'finalized_at' }, { column: 'invoice_number' }]);
    const numbers = rows.map((r) => Number(r.invoice_number!.split('-')[2]));
    expect(numbers).toEqual(numbers.map((_, i) => i + 1));
    expect(rows.every((r) => /^INV-\d{6}-\d{5,}$/.test(r.invoice_number!))).toBe(true);
    const counter = await billingDb('invoice_counters').where({ tenant_id: TEST_TENANT, environment_id: TEST_ENVIRONMENT }).first();
    expect(Number(counter?.last_number ?? 0)).toBe(numbers.length);
    return numbers.length;
  }

  /**
   * The invoice is finalized (or paid) once, with exactly its one INVOICE_CREDIT_APPLIED debit
   * of the credits it shows applied (none when it shows none).
   */
  async function finalizedOnceWithItsDebit(id: string, applied: number): Promise<void> {
    const i = await invoice(id);
    expect(['finalized', 'paid']).toContain(i.status);
    expect(i.invoice_number).not.toBeNull();
    expect(Number(i.total_prepaid_credits_applied)).toBe(applied);
    expect(Number(i.total)).toBe(Number(i.subtotal) - applied);
    expect(await finalizedEvents(id)).toBe(1);
    const debits = await debitsOf(id);
    expect(debits.map((d) => cents(d.credit_amount))).toEqual(applied > 0 ? [applied] : []);
    if (applied > 0) expect(debits[0]!.idempotency_key).toBe(`invoice:${id}`);
  }

  // ---------------------------------------------------------------- batches of backdated subscriptions

  interface Batch {
    tag: string;
    t0: Date;
    subs: Array<{ id: string; walletId: string; i: number }>;
  }

  /**
   * `n` customers with PRE_PAID wallets and usage in two periods, each with a DAILY subscription
   * whose second period ends at t0 (a few seconds after it is set up): creating it bills the
   * first period (SUBSCRIPTION_CREATE and SUBSCRIPTION_CYCLE drafts), the period job bills the
   * second one at t0 for all `n` at once.
   */
  async function prepareBatch(tag: string, n: number, leadMs = 5_000): Promise<Batch> {
    const started = Date.now();
    const owners = await pool(n, 16, (i) => customerWithWallet(`${tag}-${i}`, shape(i).credits, shape(i).all));
    // The events and subscriptions still to make take about half as long as the customers and
    // wallets did (measured: ~0.55 of it); t0 leaves room for all of it on a loaded machine.
    const ownersMs = Date.now() - started;
    const t0 = new Date(Math.ceil((Date.now() + leadMs + ownersMs) / 1000) * 1000);
    const p1At = new Date(t0.getTime() - DAY - 3_600_000).toISOString();
    const p2At = new Date(t0.getTime() - 3_600_000).toISOString();
    const events = Array.from({ length: n }, (_, i) => [
      ...Array.from({ length: shape(i).p1Calls }, (_, k) => ({ event_name: 'api_call', external_customer_id: `${tag}-${i}`, timestamp: p1At, event_id: `${tag}-${i}-p1-${k}` })),
      ...Array.from({ length: shape(i).p2Calls }, (_, k) => ({ event_name: 'api_call', external_customer_id: `${tag}-${i}`, timestamp: p2At, event_id: `${tag}-${i}-p2-${k}` })),
    ]).flat();
    const before = (await api.get('/v1/events/monitoring')).body.total_events as number;
    for (let at = 0; at < events.length; at += 1000) {
      expect((await api.post('/v1/events/bulk', { events: events.slice(at, at + 1000) })).status).toBe(202);
    }
    // The period job reads usage at t0: it must be stored by then.
    await waitFor(async () => (await api.get('/v1/events/monitoring')).body.total_events === before + events.length, {
      timeoutMs: 30_000,
      what: `${events.length} usage events stored`,
    });
    const start = new Date(t0.getTime() - 2 * DAY).toISOString();
    const subs = await pool(n, 16, async (i) => {
      const res = await api.post('/v1/subscriptions', { customer_id: owners[i]!.customerId, plan_id: dailyPlan, start_date: start, payment_terms_days: 30 });
      expect(res.status).toBe(201);
      expect(res.body.current_period_end).toBe(t0.toISOString());
      return { id: res.body.id as string, walletId: owners[i]!.walletId!, i };
    });
    const left = t0.getTime() - Date.now();
    figures.push(`${tag}: ${n} customers, wallets, ${events.length} events and subscriptions set up in ${Date.now() - started} ms; ${left} ms before t0`);
    // Else the subscriptions' creation, not the period job, would have billed the second period.
    expect(left).toBeGreaterThan(0);
    return { tag, t0, subs };
  }

  const invoicesOfBatch = (b: Batch) =>
    billingDb<InvoiceRow>('invoices')
      .whereIn(
        'subscription_id',
        b.subs.map((s) => s.id),
      )
      .orderBy([{ column: 'subscription_id' }, { column: 'period_start' }, { column: 'billing_reason' }]);

  /** Waits until the batch has its 3 invoices per subscription, none a draft; answers ms from t0. */
  async function settled(b: Batch, timeoutMs = 60_000): Promise<number> {
    await waitFor(
      async () => {
        const rows = await invoicesOfBatch(b);
        return rows.length === 3 * b.subs.length && rows.every((r) => r.status !== 'draft');
      },
      { timeoutMs, intervalMs: 100, what: `${b.tag}: ${3 * b.subs.length} invoices finalized` },
    );
    return Date.now() - b.t0.getTime();
  }

  /**
   * Checks a settled batch against its shape and the wallets, and answers one summary line per
   * customer (what a run must come to, crash or not): the invoices' reasons, periods and
   * subtotals, the credits applied in all, the totals in all and the wallet's balance.
   */
  async function checkBatch(b: Batch): Promise<string[]> {
    const rows = await invoicesOfBatch(b);
    const bySub = new Map<string, InvoiceRow[]>();
    for (const r of rows) bySub.set(r.subscription_id, [...(bySub.get(r.subscription_id) ?? []), r]);
    const p1 = new Date(b.t0.getTime() - 2 * DAY).toISOString();
    const p2 = new Date(b.t0.getTime() - DAY).toISOString();
    const walletIds = b.subs.map((s) => s.walletId);
    const debits = await walletDb<DebitRow>('transactions').whereIn('wallet_id', walletIds).where({ transaction_reason: 'INVOICE_CREDIT_APPLIED' });
    const debitByKey = new Map<string, DebitRow[]>();
    for (const d of debits) debitByKey.set(d.idempotency_key, [...(debitByKey.get(d.idempotency_key) ?? []), d]);
    const balances = new Map<string, string>(
      (await walletDb('wallets').whereIn('id', walletIds)).map((w: { id: string; credit_balance: string }) => [w.id, w.credit_balance]),
    );
    const outbox = await billingDb('outbox').whereIn(
      'message_key',
      rows.map((r) => r.id),
    );
    const finalizations = new Map<string, number>();
    for (const e of outbox as Array<{ message_key: string; value: string }>) {
      if (JSON.parse(e.value).type === 'invoice.update.finalized') finalizations.set(e.message_key, (finalizations.get(e.message_key) ?? 0) + 1);
    }

    let withCredits = 0;
    const summary: string[] = [];
    for (const s of b.subs) {
      const { p1Calls, p2Calls, credits, all } = shape(s.i);
      const mine = bySub.get(s.id) ?? [];
      // Exactly one invoice per subscription, period and billing reason, each with its amounts.
      expect(mine.map((r) => [r.billing_reason, r.period_start.toISOString(), Number(r.subtotal)])).toEqual([
        ['SUBSCRIPTION_CREATE', p1, 100],
        ['SUBSCRIPTION_CYCLE', p1, 50 * p1Calls + 100],
        ['SUBSCRIPTION_CYCLE', p2, 50 * p2Calls + 100],
      ]);
      let applied = 0;
      for (const r of mine) {
        const credit = Number(r.total_prepaid_credits_applied);
        applied += credit;
        expect(Number(r.total)).toBe(Number(r.subtotal) - credit);
        expect(r.status).toBe(Number(r.amount_due) === 0 ? 'paid' : 'finalized');
        expect(finalizations.get(r.id)).toBe(1);
        // Each wallet debited once per invoice that shows credits, by exactly what it shows.
        const own = debitByKey.get(`invoice:${r.id}`) ?? [];
        expect(own.map((d) => [d.wallet_id, cents(d.credit_amount)])).toEqual(credit > 0 ? [[s.walletId, credit]] : []);
        if (credit > 0) withCredits += 1;
      }
      // The wallet pays what it can of the lines it covers, whatever the invoices' order.
      const covered = all ? mine.reduce((sum, r) => sum + Number(r.subtotal), 0) : 50 * (p1Calls + p2Calls);
      expect(applied).toBe(Math.min(cents(credits), covered));
      expect(cents(balances.get(s.walletId)!)).toBe(cents(credits) - applied);
      const totals = mine.reduce((sum, r) => sum + Number(r.total), 0);
      summary.push(`${s.i}: ${mine.map((r) => `${r.billing_reason}/${Number(r.subtotal)}`).join(' ')} applied ${applied} total ${totals} balance ${cents(balances.get(s.walletId)!)}`);
    }
    // No debit without its invoice.
    expect(debits).toHaveLength(withCredits);
    figures.push(`${b.tag}: ${rows.length} invoices for ${b.subs.length} subscriptions, ${debits.length} INVOICE_CREDIT_APPLIED debits (= invoices with credits applied)`);
    return summary;
  }

  // ---------------------------------------------------------------- 1, 2: two replicas, reruns

  let uncrashed: string[] = [];

  it('two billing replicas running the period job at once over 200 backdated subscriptions: one invoice per subscription, period and reason, each finalized once and debited once', async () => {
    await billingWith(JOB);
    const replica = await stack.startReplica('billing', JOB);
    try {
      const b = await prepareBatch('race', RACE);
      const ms = await settled(b);
      figures.push(`race: ${3 * RACE} invoices finalized ${ms} ms after t0 by two replicas running the job every ${JOB.BILLING_INTERVAL_MS} ms`);
      uncrashed = await checkBatch(b);
      const cycle = (await invoicesOfBatch(b)).filter((r) => r.period_start.getTime() === b.t0.getTime() - DAY);
      // The second period's invoices were made by the period job, after t0.
      expect(cycle).toHaveLength(RACE);
      expect(cycle.every((r) => r.created_at.getTime() >= b.t0.getTime())).toBe(true);
      expect(await numbersAreGapFree()).toBe(3 * RACE);

      // 2: the cron endpoint rerun 10 times (both replicas' schedules still running) changes nothing.
      const ids = (await invoicesOfBatch(b)).map((r) => r.id);
      const snapshot = async () => ({
        invoices: await invoicesOfBatch(b),
        debits: (await walletDb('transactions').count({ n: '*' }))[0]!.n,
        balances: await walletDb('wallets').whereIn('id', b.subs.map((s) => s.walletId)).orderBy('id').select('id', 'credit_balance'),
        invoiceEvents: (await billingDb('outbox').whereIn('message_key', ids).count({ n: '*' }))[0]!.n,
      });
      const before = await snapshot();
      const started = Date.now();
      for (let run = 0; run < 10; run++) {
        expect(await cron()).toMatchObject({ invoices_created: 0, subscriptions_billed: 0, invoices_finalized: 0 });
      }
      figures.push(`reruns: 10 cron runs in ${Date.now() - started} ms created, billed and finalized nothing`);
      expect(await snapshot()).toEqual(before);
    } finally {
      await replica.kill();
    }
  }, 300_000);

  // ---------------------------------------------------------------- 3: SIGKILL in the middle of a run

  it('billing SIGKILLed in the middle of a period job run over 120 due subscriptions (while making, then while finalizing), started again: the same invoices, amounts and debits as a run without a crash', async () => {
    await billingWith(JOB);
    const b = await prepareBatch('crash', CRASH);
    const ids = b.subs.map((s) => s.id);
    const p2 = new Date(b.t0.getTime() - DAY);
    // Kill once the job has made some of the second period's invoices, and before it is done with them.
    const progress = async () => {
      const row = await billingDb('invoices')
        .whereIn('subscription_id', ids)
        .where({ period_start: p2 })
        .select(billingDb.raw('count(*)::int as made'), billingDb.raw(`count(*) filter (where status <> 'draft')::int as finalized`))
        .first();
      return row as { made: number; finalized: number };
    };
    const atKill = await waitFor(
      async () => {
        const p = await progress();
        return p.made >= CRASH / 5 ? p : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 5, what: 'the period job to be making the second period invoices' },
    );
    await stack.kill('billing');
    const after = await progress();
    figures.push(`crash: SIGKILL when ${atKill.made}/${CRASH} second-period invoices were made (${atKill.finalized} finalized); ${after.made} made, ${after.finalized} finalized at the kill`);
    expect(after.finalized).toBeLessThan(CRASH);

    // Right after the crash: no invoice finalized without its debit.
    const rows = await invoicesOfBatch(b);
    for (const r of rows.filter((x) => x.status !== 'draft' && Number(x.total_prepaid_credits_applied) > 0)) {
      expect((await debitsOf(r.id)).map((d) => cents(d.credit_amount))).toEqual([Number(r.total_prepaid_credits_applied)]);
    }
    const pendingDebits = (await Promise.all(rows.filter((x) => x.status === 'draft').map((x) => debitsOf(x.id)))).flat().length;
    figures.push(`crash: ${rows.filter((x) => x.status === 'draft').length} drafts left, ${pendingDebits} of them already allocated in the wallet`);

    // Started again, and killed a second time once it is finalizing them.
    await billingWith(JOB);
    const atSecond = await waitFor(
      async () => {
        const p = await progress();
        return p.finalized >= 1 ? p : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 5, what: 'the period job to be finalizing the second period invoices' },
    );
    await stack.kill('billing');
    const second = await progress();
    figures.push(`crash: second SIGKILL when ${atSecond.finalized}/${CRASH} were finalized; ${second.made} made, ${second.finalized} finalized at the kill`);
    const rows2 = await invoicesOfBatch(b);
    for (const r of rows2.filter((x) => x.status !== 'draft' && Number(x.total_prepaid_credits_applied) > 0)) {
      expect((await debitsOf(r.id)).map((d) => cents(d.credit_amount))).toEqual([Number(r.total_prepaid_credits_applied)]);
    }
    const drafts2 = rows2.filter((x) => x.status === 'draft');
    const allocated2 = (await Promise.all(drafts2.map((x) => debitsOf(x.id)))).filter((d) => d.length > 0).length;
    figures.push(`crash: ${drafts2.length} drafts left after the second kill, ${allocated2} of them already debited in the wallet (allocation committed, billing not)`);

    const restarted = Date.now();
    await billingWith(JOB);
    await settled(b);
    figures.push(`crash: settled ${Date.now() - restarted} ms after the second restart (claims of the killed process expire after 2 s)`);
    const crashed = await checkBatch(b);
    // The run without a crash is the first test's (same shapes): this one needs it to have passed.
    expect(uncrashed).toHaveLength(RACE);
    expect(crashed).toEqual(uncrashed.slice(0, CRASH));
    await numbersAreGapFree();
  }, 240_000);

  // ---------------------------------------------------------------- 4: failpoints

  /** Arms `point` in `service`, triggers it, checks the process killed itself there. */
  async function crashAt(service: 'billing' | 'wallet', point: string, trigger: () => Promise<{ status: number }>): Promise<void> {
    await stack.restart(service, { ...(service === 'billing' ? NO_JOB : {}), BILLSTREAM_FAILPOINTS: point });
    const res = await trigger();
    await waitFor(() => !stack.running(service), { timeoutMs: 10_000, what: `${service} to kill itself at ${point}` });
    expect(stack.logs(service)).toContain(`failpoint ${point}: SIGKILL`);
    return void res;
  }

  /** Runs the period job through the cron endpoint until the invoice is no longer a draft (a crashed claim expires after 2 s). */
  async function jobFinalizes(id: string): Promise<void> {
    await waitFor(
      async () => {
        await cron();
        return (await invoice(id)).status !== 'draft';
      },
      { timeoutMs: 15_000, intervalMs: 300, what: `the period job to finalize ${id}` },
    );
  }

  it('billing killed before the allocation call: nothing debited; restarted, the period job finalizes it once with one debit', async () => {
    const d = await oneDraft('fp-before', '20');
    const numbered = await numbersAreGapFree();
    await crashAt('billing', 'finalize.before-allocation', () => api.post('/v1/cron/bill-subscriptions', {}));
    expect(await invoice(d.invoiceId)).toMatchObject({ status: 'draft', invoice_number: null });
    expect(await debitsOf(d.invoiceId)).toEqual([]);
    expect(await walletDb('invoice_allocations').where({ invoice_id: d.invoiceId })).toEqual([]);
    await billingWith(NO_JOB);
    expect(await balance(d.walletId!)).toBe('20');
    await jobFinalizes(d.invoiceId);
    await finalizedOnceWithItsDebit(d.invoiceId, 2000);
    expect(await balance(d.walletId!)).toBe('0');
    expect(await numbersAreGapFree()).toBe(numbered + 1);
  }, 60_000);

  it('billing killed after the allocation, before its transaction: the wallet debited once; restarted, the period job finalizes it with that debit', async () => {
    const d = await oneDraft('fp-after', '100');
    const numbered = await numbersAreGapFree();
    await crashAt('billing', 'finalize.after-allocation', () => api.post(`/v1/invoices/${d.invoiceId}/finalize`, {}));
    expect(await invoice(d.invoiceId)).toMatchObject({ status: 'draft', invoice_number: null });
    expect((await debitsOf(d.invoiceId)).map((x) => cents(x.credit_amount))).toEqual([4900]);
    await billingWith(NO_JOB);
    expect(await balance(d.walletId!)).toBe('51');
    await jobFinalizes(d.invoiceId);
    await finalizedOnceWithItsDebit(d.invoiceId, 4900);
    expect(await invoice(d.invoiceId)).toMatchObject({ status: 'paid' });
    expect(Number((await invoice(d.invoiceId)).amount_due)).toBe(0);
    expect(await balance(d.walletId!)).toBe('51');
    expect(await numbersAreGapFree()).toBe(numbered + 1);
  }, 60_000);

  it('billing killed inside its finalization transaction before the commit: the number is not used up; restarted, a finalize call completes it once', async () => {
    const d = await oneDraft('fp-commit', '30');
    const numbered = await numbersAreGapFree();
    await crashAt('billing', 'finalize.before-commit', () => api.post('/v1/cron/bill-subscriptions', {}));
    expect(await invoice(d.invoiceId)).toMatchObject({ status: 'draft', invoice_number: null });
    expect(await finalizedEvents(d.invoiceId)).toBe(0);
    expect((await debitsOf(d.invoiceId)).map((x) => cents(x.credit_amount))).toEqual([3000]);
    // The rolled back transaction took no number.
    expect(await numbersAreGapFree()).toBe(numbered);
    await billingWith(NO_JOB);
    const fin = await api.post(`/v1/invoices/${d.invoiceId}/finalize`, {});
    expect(fin.status).toBe(200);
    expect(fin.body).toMatchObject({ status: 'finalized', total_prepaid_credits_applied: 3000, amount_due: 1900 });
    await finalizedOnceWithItsDebit(d.invoiceId, 3000);
    expect(await balance(d.walletId!)).toBe('0');
    expect(await numbersAreGapFree()).toBe(numbered + 1);
  }, 60_000);

  it('the wallet killed inside its allocation transaction before the commit: nothing debited, the draft stays a draft; restarted, a finalize call debits once', async () => {
    const d = await oneDraft('fp-wallet', '10');
    const numbered = await numbersAreGapFree();
    await crashAt('wallet', 'wallet.allocate.before-commit', () => api.post(`/v1/invoices/${d.invoiceId}/finalize`, {}));
    expect(await invoice(d.invoiceId)).toMatchObject({ status: 'draft', invoice_number: null });
    expect(await debitsOf(d.invoiceId)).toEqual([]);
    expect(await walletDb('invoice_allocations').where({ invoice_id: d.invoiceId })).toEqual([]);
    // With the wallet down, neither a finalize call nor the period job finalizes it.
    expect((await api.post(`/v1/invoices/${d.invoiceId}/finalize`, {})).status).toBe(503);
    await cron();
    expect(await invoice(d.invoiceId)).toMatchObject({ status: 'draft' });
    await stack.restart('wallet');
    expect(await balance(d.walletId!)).toBe('10');
    const fin = await api.post(`/v1/invoices/${d.invoiceId}/finalize`, {});
    expect(fin.status).toBe(200);
    await finalizedOnceWithItsDebit(d.invoiceId, 1000);
    expect(await balance(d.walletId!)).toBe('0');
    expect(await numbersAreGapFree()).toBe(numbered + 1);
  }, 60_000);

  it('the wallet killed inside a batch allocation before the commit: nothing of the batch written; restarted, the same batch allocates each draft once and billing finalizes it with that debit', async () => {
    // Three customers with 60 credits and two drafts of 4900 each: 4900 then 1100 applied.
    const owners = await pool(3, 3, (i) => customerWithWallet(`fp-batch-${i}`, '60'));
    const drafts = await pool(6, 6, (k) => draftFor(owners[k % 3]!, null));
    const ordered = [0, 3, 1, 4, 2, 5].map((k) => drafts[k]!);
    const invoices = await Promise.all(
      ordered.map(async (d) => {
        const i = (await api.get(`/v1/invoices/${d.invoiceId}`)).body;
        const lines = i.line_items.map((l: { id: string; price_type: string; amount: number }) => ({ id: l.id, price_type: l.price_type, amount: l.amount }));
        return { invoice_id: i.id as string, customer_id: i.customer_id as string, currency: 'usd', exponent: 2, lines };
      }),
    );
    const ids = invoices.map((i) => i.invoice_id);
    // The batch endpoint is internal (the period job calls it): straight to the wallet service, as billing does.
    const send = () =>
      new ApiClient(stack.urls.wallet).post('/internal/v1/invoices/allocations', { invoices }, {
        'x-internal-token': stack.internalToken,
        'x-tenant-id': TEST_TENANT,
        'x-environment-id': TEST_ENVIRONMENT,
      });
    await crashAt('wallet', 'wallet.allocate.before-commit', () => send().catch(() => ({ status: 0 })));
    expect(await walletDb('invoice_allocations').whereIn('invoice_id', ids)).toEqual([]);
    expect(await walletDb('invoice_debits').whereIn('invoice_id', ids)).toEqual([]);
    for (const o of owners) expect((await walletDb('wallets').where({ id: o.walletId }).first()).credit_balance).toBe('60');
    await stack.restart('wallet');
    const res = await send();
    expect(res.status).toBe(200);
    expect(res.body.allocations.map((a: { prepaid: { amount: number } | null }) => a.prepaid?.amount)).toEqual([4900, 1100, 4900, 1100, 4900, 1100]);
    expect((await send()).body).toEqual(res.body);
    expect(await walletDb('invoice_debits').whereIn('invoice_id', ids)).toHaveLength(6);
    // Billing finalizes each with the batch's allocation (the wallet answers it stored), debiting nothing more.
    for (const [k, id] of ids.entries()) {
      expect((await api.post(`/v1/invoices/${id}/finalize`, {})).status).toBe(200);
      await finalizedOnceWithItsDebit(id, k % 2 === 0 ? 4900 : 1100);
    }
    for (const o of owners) expect(await balance(o.walletId!)).toBe('0');
  }, 60_000);

  it('the wallet SIGKILLed while the period job finalizes 40 drafts: none finalized without its debit, drafts wait; after its restart each is finalized with one debit', async () => {
    const drafts = await pool(40, 8, (i) => oneDraft(`wdown-${i}`, i % 2 === 0 ? '20' : '60'));
    const lateOwners = await pool(5, 5, (i) => customerWithWallet(`wdown-late-${i}`, '20'));
    const ids = drafts.map((d) => d.invoiceId);
    const finalized = async () => Number((await billingDb('invoices').whereIn('id', ids).whereNot({ status: 'draft' }).count({ n: '*' }))[0]!.n);
    const run = api.post('/v1/cron/bill-subscriptions', {});
    const atKill = await waitFor(async () => (await finalized()) >= 3 && (await finalized()), { timeoutMs: 15_000, intervalMs: 5, what: 'some drafts finalized' });
    await stack.kill('wallet');
    expect((await run).status).toBe(200);
    // More drafts made while the wallet is down (their customers and wallets made before): they wait too.
    const late = await pool(5, 5, (i) => draftFor(lateOwners[i]!, '20'));
    const all = [...drafts, ...late];
    const down = await cron();
    expect(down.invoices_finalized).toBe(0);
    const whileDown = await billingDb<InvoiceRow>('invoices').whereIn('id', all.map((d) => d.invoiceId));
    for (const r of whileDown.filter((x) => x.status !== 'draft')) {
      const d = all.find((x) => x.invoiceId === r.id)!;
      await finalizedOnceWithItsDebit(r.id, d.applied);
    }
    const waiting = whileDown.filter((x) => x.status === 'draft').length;
    figures.push(`wallet down: killed when ${atKill}/40 were finalized; ${whileDown.length - waiting} finalized (each with its debit), ${waiting} drafts waited`);
    expect(waiting).toBeGreaterThanOrEqual(5);

    await stack.restart('wallet');
    await waitFor(
      async () => {
        await cron();
        return (await billingDb('invoices').whereIn('id', all.map((d) => d.invoiceId)).where({ status: 'draft' })).length === 0;
      },
      { timeoutMs: 20_000, intervalMs: 300, what: 'every draft finalized after the wallet restart' },
    );
    for (const d of all) {
      await finalizedOnceWithItsDebit(d.invoiceId, d.applied);
      expect(await balance(d.walletId!)).toBe(String((Number(d.credits) * 100 - d.applied) / 100));
    }
    await numbersAreGapFree();
  }, 90_000);

  // ---------------------------------------------------------------- 7: void after a crash after the allocation

  it('voiding a draft whose finalization crashed after the allocation gives the credits back once, and no run finalizes it', async () => {
    const d = await oneDraft('fp-void', '25');
    await crashAt('billing', 'finalize.after-allocation', () => api.post(`/v1/invoices/${d.invoiceId}/finalize`, {}));
    expect((await debitsOf(d.invoiceId)).map((x) => cents(x.credit_amount))).toEqual([2500]);
    await billingWith(NO_JOB);
    expect(await balance(d.walletId!)).toBe('0');
    const voided = await api.post(`/v1/invoices/${d.invoiceId}/void`, {});
    expect(voided.status).toBe(200);
    expect(voided.body).toMatchObject({ status: 'voided', invoice_number: null, voided_at: expect.any(String) });
    await waitFor(async () => (await balance(d.walletId!)) === '25', { timeoutMs: 10_000, what: 'the credits back' });
    // Runs after the void (past the 2 s claims) neither finalize it nor debit or refund again.
    for (let run = 0; run < 3; run++) {
      await cron();
      await sleep(800);
    }
    expect(await invoice(d.invoiceId)).toMatchObject({ status: 'voided', invoice_number: null });
    expect((await api.post(`/v1/invoices/${d.invoiceId}/finalize`, {})).status).toBe(400);
    expect(await debitsOf(d.invoiceId)).toHaveLength(1);
    const notes = await debitsOf(d.invoiceId, 'CREDIT_NOTE');
    expect(notes.map((n) => cents(n.credit_amount))).toEqual([2500]);
    expect(await walletDb('invoice_allocations').where({ invoice_id: d.invoiceId }).first()).toMatchObject({ status: 'voided' });
    expect(await balance(d.walletId!)).toBe('25');
  }, 60_000);

  // ---------------------------------------------------------------- 5, 6: two replicas behind two gateways

  describe('two billing replicas, each behind its own gateway', () => {
    let replica: Replica;
    let gateway: Replica;
    let apiB: ApiClient;

    beforeAll(async () => {
      replica = await stack.startReplica('billing', NO_JOB);
      gateway = await stack.startReplica('gateway', { BILLING_SERVICE_URL: replica.url });
      apiB = new ApiClient(gateway.url, api.key);
    }, 60_000);
    afterAll(async () => {
      await gateway?.kill();
      await replica?.kill();
    });

    it('10 concurrent finalize calls, 5 through each replica: one 200, nine 400, one debit', async () => {
      const d = await oneDraft('ten-calls', '100');
      const calls = Array.from({ length: 10 }, (_, k) => (k % 2 === 0 ? api : apiB).post(`/v1/invoices/${d.invoiceId}/finalize`, {}));
      const answers = await Promise.all(calls);
      expect(answers.map((a) => a.status).sort()).toEqual([200, 400, 400, 400, 400, 400, 400, 400, 400, 400]);
      expect(answers.find((a) => a.status === 200)!.body).toMatchObject({ status: 'paid', total_prepaid_credits_applied: 4900, amount_due: 0 });
      await finalizedOnceWithItsDebit(d.invoiceId, 4900);
      expect(await balance(d.walletId!)).toBe('51');
      await numbersAreGapFree();
    }, 60_000);

    it('50 drafts finalized at once by 50 calls across both replicas, then 50 by both replicas\u2019 period jobs at once: numbers gap-free and in finalization order', async () => {
      const first = await pool(50, 10, (i) => oneDraft(`n50-${i}`, i % 3 === 0 ? null : '10'));
      const numbered = await numbersAreGapFree();
      const started = Date.now();
      const answers = await Promise.all(first.map((d, k) => (k % 2 === 0 ? api : apiB).post(`/v1/invoices/${d.invoiceId}/finalize`, {})));
      figures.push(`numbers: 50 concurrent finalize calls across two replicas answered in ${Date.now() - started} ms`);
      expect(answers.map((a) => a.status)).toEqual(first.map(() => 200));
      expect(await numbersAreGapFree()).toBe(numbered + 50);
      const mine = answers.map((a) => a.body as { invoice_number: string; finalized_at: string }).sort((a, b) => a.finalized_at.localeCompare(b.finalized_at) || a.invoice_number.localeCompare(b.invoice_number));
      expect(mine.map((i) => Number(i.invoice_number.split('-')[2]))).toEqual(mine.map((_, k) => numbered + 1 + k));
      for (const d of first) await finalizedOnceWithItsDebit(d.invoiceId, d.applied);

      const second = await pool(50, 10, (i) => oneDraft(`j50-${i}`, i % 3 === 0 ? null : '10'));
      const [a, b] = await Promise.all([cron(api), cron(apiB)]);
      figures.push(`numbers: both replicas' period jobs finalized ${a.invoices_finalized} + ${b.invoices_finalized} drafts at once`);
      expect(a.invoices_finalized + b.invoices_finalized).toBe(50);
      for (const d of second) await finalizedOnceWithItsDebit(d.invoiceId, d.applied);
      expect(await numbersAreGapFree()).toBe(numbered + 100);
    }, 90_000);
  });

  // ---------------------------------------------------------------- across everything above

  it('across every test: each INVOICE_CREDIT_APPLIED debit belongs to an invoice that shows it (or a voided one it was refunded to), each invoice with credits has exactly one', async () => {
    const debits = await walletDb<DebitRow>('transactions').where({ transaction_reason: 'INVOICE_CREDIT_APPLIED' });
    const invoices = await billingDb<InvoiceRow>('invoices').where({ tenant_id: TEST_TENANT, environment_id: TEST_ENVIRONMENT });
    const byId = new Map(invoices.map((i) => [i.id, i]));
    const refunded = new Set((await walletDb('invoice_debits').whereNotNull('refunded_at')).map((d: { transaction_id: string }) => d.transaction_id));
    const seen = new Set<string>();
    for (const d of debits) {
      const id = d.idempotency_key.replace(/^invoice:/, '');
      expect(seen.has(id)).toBe(false);
      seen.add(id);
      const i = byId.get(id)!;
      expect(i).toBeDefined();
      if (i.status === 'voided') expect(refunded.has(d.id)).toBe(true);
      else {
        expect(['finalized', 'paid']).toContain(i.status);
        expect(Number(i.total_prepaid_credits_applied)).toBe(cents(d.credit_amount));
      }
    }
    const withCredits = invoices.filter((i) => Number(i.total_prepaid_credits_applied) > 0);
    expect(withCredits.every((i) => seen.has(i.id))).toBe(true);
    expect(invoices.filter((i) => i.status === 'draft')).toEqual([]);
    figures.push(`all: ${invoices.length} invoices, ${withCredits.length} with credits applied, ${debits.length} INVOICE_CREDIT_APPLIED debits, ${await numbersAreGapFree()} numbers gap-free`);
  });
});
