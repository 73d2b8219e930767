import { InProcessBus, TOPICS, type Subscription as BusSubscription } from '@billstream/bus';
import type { Scope, WebhookEventName } from '@billstream/contracts';
import { ServiceUnavailableError } from '@billstream/errors';
import { newDomainEvent } from '@billstream/outbox';
import { testLogger } from '@billstream/testing';
import { CTX, ENVIRONMENT, TENANT, startBillingHarness, type BillingHarness } from '../testing/harness';
import type { Allocation, WalletInfo, Wallets, WalletPaymentResult } from '../clients/wallets/domain';
import { subscribeWalletEvents } from './consumer';

type Settled = 'COMPLETED' | 'FAILED';

/** The wallet service as billing sees it: wallets to read, settlements and refunds recorded, outages on demand. */
class FakeWallets implements Wallets {
  readonly wallets = new Map<string, WalletInfo>();
  readonly settles: Array<{ walletId: string; transactionId: string; status: Settled }> = [];
  readonly refunds: string[] = [];
  /** Credits no longer PENDING in the wallet (settled by a client, failed by a termination). */
  readonly notPending = new Set<string>();
  reads = 0;
  /** Calls of each kind that fail with a 503 before the wallet answers again. */
  down = { wallet: 0, settle: 0 };

  add(id: string, over: Partial<WalletInfo> = {}): string {
    this.wallets.set(id, { id, customer_id: 'cust_t1', currency: 'usd', topup_conversion_rate: '1', ...over });
    return id;
  }
  async wallet(_scope: Scope, id: string): Promise<WalletInfo | undefined> {
    this.reads += 1;
    if (this.down.wallet > 0 && this.down.wallet--) throw new ServiceUnavailableError('wallet down');
    return this.wallets.get(id);
  }
  async settle(_scope: Scope, walletId: string, transactionId: string, status: Settled): Promise<void> {
    if (this.down.settle > 0 && this.down.settle--) throw new ServiceUnavailableError('wallet down');
    this.settles.push({ walletId, transactionId, status });
  }
  async isPendingInvoicedCredit(_scope: Scope, walletId: string, transactionId: string): Promise<boolean> {
    return this.wallets.has(walletId) && !this.notPending.has(transactionId);
  }
  async refund(_scope: Scope, invoiceId: string): Promise<void> {
    this.refunds.push(invoiceId);
  }
  allocate(): Promise<Allocation> {
    throw new Error('a CREDIT_PURCHASE invoice is never allocated credits');
  }
  reportUnbilled(): Promise<void> {
    throw new Error('no usage in these tests: nothing is unbilled');
  }
  allocateMany(): Promise<Allocation[]> {
    throw new Error('a CREDIT_PURCHASE invoice is never allocated credits');
  }
  pay(): Promise<WalletPaymentResult> {
    throw new Error('a CREDIT_PURCHASE invoice is never paid with credits');
  }
  settlesOf(transactionId: string): Settled[] {
    return this.settles.filter((s) => s.transactionId === transactionId).map((s) => s.status);
  }
}

let seq = 0;
function walletEvent(transaction: Record<string, unknown>, type: WebhookEventName = 'wallet.transaction.created') {
  const event = newDomainEvent(type, { tenantId: TENANT, environmentId: ENVIRONMENT, actor: 'key_x' }, {
    transaction: {
      id: `wtxn_t${++seq}`,
      wallet_id: 'wallet_t1',
      type: 'CREDIT',
      transaction_status: 'PENDING',
      transaction_reason: 'PURCHASED_CREDIT_INVOICED',
      credit_amount: '50',
      tenant_id: TENANT,
      environment_id: ENVIRONMENT,
      ...transaction,
    },
  });
  const message = { key: String(event.payload.transaction.wallet_id), value: JSON.stringify(event), headers: { 'message-id': event.id, 'event-type': type } };
  return { message, transactionId: event.payload.transaction.id as string };
}

describe('invoiced top-ups in billing (real Postgres, the wallet service faked)', () => {
  let h: BillingHarness;
  let wallets: FakeWallets;
  let bus: InProcessBus;
  let consumer: BusSubscription;

  beforeAll(async () => {
    wallets = new FakeWallets();
    h = await startBillingHarness('2026-11-26T12:00:00Z', { wallets });
    bus = new InProcessBus();
    await bus.start();
    consumer = await subscribeWalletEvents({ bus, logger: testLogger('billing'), topups: h.service.topups });
    wallets.add('wallet_t1');
  });
  afterAll(async () => {
    await consumer?.stop();
    await bus?.stop();
    await h?.stop();
  });

  const invoicesOf = (transactionId: string) => h.db('invoices').where({ source_key: `topup:${transactionId}` });
  const invoiceOf = async (transactionId: string) => {
    const rows = await invoicesOf(transactionId);
    expect(rows).toHaveLength(1);
    return h.service.invoices.get(CTX, rows[0].id);
  };
  const eventTypes = async (invoiceId: string) =>
    (await h.db('outbox').where({ message_key: invoiceId }).orderBy('seq')).map((r: { value: string }) => JSON.parse(r.value).type);
  const pay = (invoiceId: string, amount: number, extra: { idempotencyKey?: string } = {}) =>
    h.service.payments.create(CTX, { invoiceId, amount, paymentMethodType: 'OFFLINE', ...extra }, 'req-pay');

  it('makes one finalized CREDIT_PURCHASE invoice per top-up, however often its event arrives; other wallet events make none', async () => {
    const { message, transactionId } = walletEvent({ credit_amount: '50' });
    const copy = { ...message, headers: { ...message.headers, 'message-id': 'evt_relayed_again' } };
    await bus.publish(TOPICS.walletEvents, [message]);
    await bus.publish(TOPICS.walletEvents, [message, copy]);
    await Promise.all([1, 2, 3, 4].map(() => h.service.topups.invoice({ scope: CTX, walletId: 'wallet_t1', transactionId, credits: '50' }, 'r')));
    const invoice = await invoiceOf(transactionId);
    expect(invoice).toMatchObject({
      billingReason: 'CREDIT_PURCHASE',
      subscriptionId: null,
      customerId: 'cust_t1',
      source: { wallet_id: 'wallet_t1', transaction_id: transactionId },
      status: 'finalized',
      paymentStatus: 'pending',
      invoiceNumber: 'INV-202611-00001',
      subtotal: 5000,
      amountDue: 5000,
      amountRemaining: 5000,
      totalPrepaidCreditsApplied: 0,
      dueDate: new Date('2026-11-26T12:00:00Z'),
    });
    expect(invoice.lines).toHaveLength(1);
    expect(invoice.lines[0]).toMatchObject({ priceId: null, priceType: 'FIXED', description: 'Purchase of 50 credits', quantity: '50', unitAmount: '1', amount: 5000 });
    expect(await eventTypes(invoice.id)).toEqual(['invoice.create.drafted', 'invoice.update.finalized']);
    // The number counter moved once: the repeats took no number.
    expect(Number((await h.db('invoice_counters').where({ tenant_id: TENANT }))[0].last_number)).toBe(1);

    const before = Number((await h.db('invoices').count({ n: '*' }))[0].n);
    const others = [
      walletEvent({ transaction_status: 'COMPLETED' }),
      walletEvent({ transaction_reason: 'PURCHASED_CREDIT_DIRECT', transaction_status: 'COMPLETED' }),
      walletEvent({ type: 'DEBIT', transaction_reason: 'INVOICE_PAYMENT', transaction_status: 'COMPLETED' }),
      walletEvent({}, 'wallet.updated'),
    ].map((e) => e.message);
    await bus.publish(TOPICS.walletEvents, [...others, { key: 'x', value: 'not json', headers: {} }]);
    expect(Number((await h.db('invoices').count({ n: '*' }))[0].n)).toBe(before);
  });

  it('paid in two OFFLINE parts: the credit settles COMPLETED once, after the second', async () => {
    wallets.add('wallet_rate', { topup_conversion_rate: '0.333' });
    const { message, transactionId } = walletEvent({ wallet_id: 'wallet_rate', credit_amount: '15' });
    await bus.publish(TOPICS.walletEvents, [message]);
    const invoice = await invoiceOf(transactionId);
    expect([invoice.subtotal, invoice.lines[0].unitAmount]).toEqual([500, '0.333']);
    await pay(invoice.id, 200);
    expect(wallets.settlesOf(transactionId)).toEqual([]);
    expect((await h.service.invoices.get(CTX, invoice.id)).settleState).toBeNull();
    await pay(invoice.id, 300, { idempotencyKey: 'second-part' });
    expect(wallets.settlesOf(transactionId)).toEqual(['COMPLETED']);
    expect(await h.service.invoices.get(CTX, invoice.id)).toMatchObject({ status: 'paid', paymentStatus: 'succeeded', settleState: 'done' });
    await pay(invoice.id, 300, { idempotencyKey: 'second-part' });
    await h.service.periods.runOnce();
    expect(wallets.settlesOf(transactionId)).toEqual(['COMPLETED']);
  });

  it('settles after a crash or outage right after the payment committed: the period job retries the pending settle', async () => {
    const { message, transactionId } = walletEvent({ credit_amount: '3' });
    await bus.publish(TOPICS.walletEvents, [message]);
    const invoice = await invoiceOf(transactionId);
    wallets.down.settle = 1;
    const payment = await pay(invoice.id, 300);
    expect(payment.paymentStatus).toBe('succeeded');
    expect(await h.service.invoices.get(CTX, invoice.id)).toMatchObject({ status: 'paid', settleState: 'pending' });
    expect(wallets.settlesOf(transactionId)).toEqual([]);
    await h.service.periods.runOnce();
    expect(wallets.settlesOf(transactionId)).toEqual(['COMPLETED']);
    expect((await h.service.invoices.get(CTX, invoice.id)).settleState).toBe('done');
    await h.replica().periods.runOnce();
    expect(wallets.settlesOf(transactionId)).toEqual(['COMPLETED']);
  });

  it('refuses a CREDITS payment of an invoiced top-up (credits never buy credits) and writes nothing', async () => {
    const { message, transactionId } = walletEvent({ credit_amount: '2' });
    await bus.publish(TOPICS.walletEvents, [message]);
    const invoice = await invoiceOf(transactionId);
    const payments = Number((await h.db('payments').count({ n: '*' }))[0].n);
    await expect(
      h.service.payments.create(CTX, { invoiceId: invoice.id, amount: 100, paymentMethodType: 'CREDITS', walletId: 'wallet_t1' }, 'r'),
    ).rejects.toMatchObject({ kind: 'validation', details: { field: 'payment_method_type' } });
    expect(Number((await h.db('payments').count({ n: '*' }))[0].n)).toBe(payments);
    expect((await h.service.invoices.get(CTX, invoice.id)).amountPaid).toBe(0);
  });

  it('voided: the credit settles FAILED, retried by the period job when the wallet was down, never COMPLETED', async () => {
    const { message, transactionId } = walletEvent({ credit_amount: '4' });
    await bus.publish(TOPICS.walletEvents, [message]);
    const invoice = await invoiceOf(transactionId);
    wallets.down.settle = 1;
    const voided = await h.service.invoices.void(CTX, invoice.id, 'r', 'key_test');
    expect(voided).toMatchObject({ status: 'voided', refundState: 'pending' });
    expect(wallets.settlesOf(transactionId)).toEqual([]);
    await h.service.periods.runOnce();
    expect(wallets.settlesOf(transactionId)).toEqual(['FAILED']);
    expect(await h.service.invoices.get(CTX, invoice.id)).toMatchObject({ refundState: 'done', settleState: null });
    await expect(pay(invoice.id, 400)).rejects.toMatchObject({ kind: 'validation' });
    await h.service.periods.runOnce();
    expect(wallets.settlesOf(transactionId)).toEqual(['FAILED']);
  });

  it('a top-up worth nothing in minor units is paid at finalization and settles COMPLETED at once', async () => {
    const { message, transactionId } = walletEvent({ credit_amount: '0.001' });
    await bus.publish(TOPICS.walletEvents, [message]);
    expect(await invoiceOf(transactionId)).toMatchObject({ status: 'paid', subtotal: 0, settleState: 'done' });
    expect(wallets.settlesOf(transactionId)).toEqual(['COMPLETED']);
  });

  it('a wallet outage fails the delivery (Kafka redelivers it); a credit no longer pending or an unknown wallet makes no invoice and blocks nothing', async () => {
    const { message, transactionId } = walletEvent({ credit_amount: '5' });
    wallets.down.wallet = 1;
    await expect(bus.publish(TOPICS.walletEvents, [message])).rejects.toMatchObject({ kind: 'unavailable' });
    expect(await invoicesOf(transactionId)).toHaveLength(0);
    await bus.publish(TOPICS.walletEvents, [message]);
    expect((await invoiceOf(transactionId)).status).toBe('finalized');

    // Settled by the client before billing read the event (or failed by the wallet's termination,
    // or an old event of the topic's history read by a first start): nothing is left to invoice.
    const settled = walletEvent({});
    wallets.notPending.add(settled.transactionId);
    const unknown = walletEvent({ wallet_id: 'wallet_nope' });
    await bus.publish(TOPICS.walletEvents, [settled.message, unknown.message]);
    expect([...(await invoicesOf(settled.transactionId)), ...(await invoicesOf(unknown.transactionId))]).toHaveLength(0);
    const after = walletEvent({ credit_amount: '9' });
    await bus.publish(TOPICS.walletEvents, [after.message]);
    expect((await invoiceOf(after.transactionId)).subtotal).toBe(900);
  });

  it('a draft a crash left behind is finalized by the redelivery or the period job, with one number', async () => {
    const { transactionId } = walletEvent({});
    const topup = { scope: CTX, walletId: 'wallet_t1', transactionId, credits: '6' };
    // The crash: the draft committed, the process died before finalizing it.
    const finalize = h.service.invoices.finalize;
    h.service.invoices.finalize = async (draft) => draft;
    const draft = await h.service.topups.invoice(topup, 'r');
    h.service.invoices.finalize = finalize;
    expect(draft).toMatchObject({ status: 'draft', invoiceNumber: null });
    await h.service.periods.runOnce();
    const done = await invoiceOf(transactionId);
    expect(done).toMatchObject({ status: 'finalized', invoiceNumber: expect.stringMatching(/^INV-202611-\d{5}$/) });
    expect((await h.service.topups.invoice(topup, 'r'))!.invoiceNumber).toBe(done.invoiceNumber);
    // Due on finalization (payment_terms_days 0): the period job that finalized it marks it overdue too.
    expect(await eventTypes(done.id)).toEqual(['invoice.create.drafted', 'invoice.update.finalized', 'invoice.payment.overdue']);
  });
});
