import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { waitFor } from '@billstream/testing';
import { startProcessStack, type ProcessStack } from './support/stack';

/** Keeps every webhook envelope it is sent and answers 200. */
async function startReceiver() {
  const received: Array<{ type: string; payload: Record<string, unknown> }> = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      received.push({ type: body.event_name, payload: body.payload });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    received,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    close: () => new Promise((r) => server.close(r)),
  };
}

describe('billing as its own process, through the gateway (e2e: six processes, real Postgres and Kafka)', () => {
  let stack: ProcessStack;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;

  beforeAll(async () => {
    receiver = await startReceiver();
    stack = await startProcessStack({
      env: {
        'webhook-dispatcher': { WEBHOOK_ALLOW_INSECURE: 'true', WEBHOOK_POLL_MS: '100' },
        // Every monthly period is within its renewal notice at once: renewal.due flows end to end.
        billing: { BILLING_INTERVAL_MS: '300', SUBSCRIPTION_RENEWAL_NOTICE_DAYS: '40' },
      },
    });
  }, 180_000);
  afterAll(async () => {
    await stack?.stop();
    await receiver?.close();
  });

  it('creates a plan with prices, subscribes, walks the lifecycle, prices usage and delivers the events', async () => {
    const hook = await stack.api.post('/v1/webhook-endpoints', { url: receiver.url, events: ['*'] });
    expect(hook.status).toBe(201);
    const meter = await stack.api.post('/v1/meters', { name: 'calls', event_name: 'api_call', aggregation: { type: 'COUNT' } });
    const plan = await stack.api.post('/v1/plans', {
      name: 'Starter',
      lookup_key: 'starter',
      prices: [
        { type: 'FIXED', currency: 'usd', amount: '20', billing_model: 'FLAT_FEE', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE' },
        {
          type: 'USAGE',
          currency: 'usd',
          billing_model: 'TIERED',
          tier_mode: 'SLAB',
          tiers: [{ up_to: '2', unit_amount: '1' }, { up_to: null, unit_amount: '0.25' }],
          billing_period: 'MONTHLY',
          invoice_cadence: 'ARREAR',
          meter_id: meter.body.id,
        },
      ],
    });
    expect(plan.status).toBe(201);
    const customer = await stack.api.post('/v1/customers', { external_customer_id: 'e2e-acme' });

    const sub = await stack.api.post('/v1/subscriptions', { customer_id: customer.body.id, plan_id: plan.body.id });
    expect(sub.status).toBe(201);
    expect(sub.body).toMatchObject({ status: 'active', currency: 'usd', billing_period: 'MONTHLY' });
    const id = sub.body.id as string;

    // Right after the period start: before the pause below, which closes the period with this usage.
    const at = new Date(Date.parse(sub.body.current_period_start) + 1).toISOString();
    const events = Array.from({ length: 5 }, (_, i) => ({ event_id: `e2e-${i}`, event_name: 'api_call', external_customer_id: 'e2e-acme', timestamp: at }));
    expect((await stack.api.post('/v1/events/bulk', { events })).status).toBe(202);
    const usage = await waitFor(
      async () => {
        const res = await stack.api.get(`/v1/subscriptions/${id}/usage`);
        return res.body.items?.[0]?.quantity === '5' ? res.body : undefined;
      },
      { timeoutMs: 30_000, what: 'usage of the 5 events' },
    );
    // SLAB: 2 x 1.00 + 3 x 0.25 = 2.75 usd
    expect(usage).toMatchObject({ amount: 275, items: [{ quantity: '5', amount: 275, lines: [{ amount: 200 }, { amount: 75 }] }] });

    // The first period's renewal notice (every period is within the 40-day notice) goes out
    // before the pause closes that period: the job runs every 300 ms, so wait for it here.
    await waitFor(() => receiver.received.some((r) => r.type === 'subscription.renewal.due'), {
      timeoutMs: 30_000,
      intervalMs: 100,
      what: "the first period's renewal notice",
    });
    expect((await stack.api.post(`/v1/subscriptions/${id}/activate`, {})).status).toBe(400);
    expect((await stack.api.post(`/v1/subscriptions/${id}/pause`, {})).body.status).toBe('paused');
    expect((await stack.api.post(`/v1/subscriptions/${id}/resume`, {})).body.status).toBe('active');
    expect((await stack.api.post(`/v1/subscriptions/${id}/cancel`, { cancel_at: 'immediately' })).body.status).toBe('cancelled');

    const wanted = ['subscription.created', 'subscription.renewal.due', 'subscription.paused', 'subscription.resumed', 'subscription.cancelled'];
    await waitFor(() => wanted.every((t) => receiver.received.some((r) => r.type === t)), {
      timeoutMs: 60_000,
      intervalMs: 200,
      what: `webhooks ${wanted.join(', ')}`,
    });
    // Once per period: the resume started a new period, which may have had its own notice.
    const periodEnds = receiver.received
      .filter((r) => r.type === 'subscription.renewal.due')
      .map((r) => (r.payload as { subscription: { id: string; current_period_end: string } }).subscription)
      .map((s) => `${s.id} ${s.current_period_end}`);
    expect(periodEnds.length).toBeGreaterThanOrEqual(1);
    expect(new Set(periodEnds).size).toBe(periodEnds.length);
    expect(periodEnds[0]).toBe(`${id} ${sub.body.current_period_end}`);

    // The lifecycle made its invoices; the period job (every 300 ms) finalizes them, and the
    // webhooks carry the invoice as the spec shows it.
    const invoices = await waitFor(
      async () => {
        const res = await stack.api.get(`/v1/invoices?subscription_id=${id}`);
        const items = res.body.items as Array<{ id: string; billing_reason: string; status: string; amount_due: number; invoice_number: string }>;
        return items.length === 4 && items.every((i) => i.status !== 'draft') ? items : undefined;
      },
      { timeoutMs: 30_000, what: 'four finalized invoices' },
    );
    const byReason = Object.fromEntries(invoices.map((i) => [i.billing_reason, i]));
    expect(Object.keys(byReason).sort()).toEqual(['SUBSCRIPTION_CANCEL', 'SUBSCRIPTION_CREATE', 'SUBSCRIPTION_PAUSE', 'SUBSCRIPTION_RESUME']);
    expect(byReason.SUBSCRIPTION_CREATE).toMatchObject({ status: 'finalized', amount_due: 2000 });
    expect(byReason.SUBSCRIPTION_PAUSE).toMatchObject({ status: 'finalized', amount_due: 275 });
    const paid = await stack.api.post('/v1/payments', { invoice_id: byReason.SUBSCRIPTION_PAUSE.id, amount: 275, payment_method_type: 'OFFLINE' });
    expect(paid.status).toBe(201);
    const hooks = ['invoice.create.drafted', 'invoice.update.finalized', 'payment.success', 'invoice.update.payment'];
    await waitFor(() => hooks.every((t) => receiver.received.some((r) => r.type === t)), { timeoutMs: 30_000, intervalMs: 200, what: `webhooks ${hooks.join(', ')}` });
    const finalized = receiver.received.find(
      (r) => r.type === 'invoice.update.finalized' && (r.payload as { invoice: { id: string } }).invoice.id === byReason.SUBSCRIPTION_CREATE.id,
    );
    expect(finalized?.payload.invoice).toMatchObject({
      id: byReason.SUBSCRIPTION_CREATE.id,
      invoice_number: byReason.SUBSCRIPTION_CREATE.invoice_number,
      customer_id: customer.body.id,
      status: 'finalized',
      amount_due: 2000,
      currency: 'usd',
      due_date: expect.any(String),
      line_items: [{ description: expect.any(String), quantity: '1', unit_amount: '20', amount: 2000 }],
    });
  }, 180_000);

  it('answers the check from a check-only entitlements replica while another replica applies billing\'s changes (ADR 0061)', async () => {
    // The gateway's entitlements replica stops applying billing-events; a second replica does it.
    await stack.restart('entitlements', { ENTITLEMENTS_PROJECTION: 'false' });
    let projector = await stack.startReplica('entitlements', { ENTITLEMENTS_PROJECTION: 'true' });
    const feature = (await stack.api.post('/v1/features', { name: 'Export', lookup_key: `export-${Date.now()}`, type: 'BOOLEAN' })).body;
    const plan = (await stack.api.post('/v1/plans', { name: 'Team', prices: [{ type: 'FIXED', billing_model: 'FLAT_FEE', amount: '5', currency: 'usd', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE' }] })).body;
    const entitlement = await stack.api.post('/v1/entitlements', { plan_id: plan.id, feature_id: feature.id, is_enabled: true });
    expect(entitlement.status).toBe(201);
    const customer = (await stack.api.post('/v1/customers', { external_customer_id: `check-only-${Date.now()}` })).body;
    expect((await stack.api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: plan.id })).status).toBe(201);
    const check = async () => {
      const res = await stack.api.post('/v1/entitlements/check', { customer_id: customer.id, feature_lookup_key: feature.lookup_key });
      expect(res.status).toBe(200);
      return res.body.allowed as boolean;
    };
    await waitFor(check, { timeoutMs: 30_000, what: 'the check-only replica granting what the projecting replica applied' });

    // Without a projecting replica nothing applies the change: the check-only replica keeps answering what is projected.
    await projector.kill();
    expect((await stack.api.put(`/v1/entitlements/${entitlement.body.id}`, { is_enabled: false })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 2500));
    expect(await check()).toBe(true);
    // A projecting replica again: it takes the change from its group's offset and the check-only replica hears of it.
    projector = await stack.startReplica('entitlements', { ENTITLEMENTS_PROJECTION: 'true' });
    await waitFor(async () => !(await check()), { timeoutMs: 30_000, what: 'the disabled entitlement reaching the check-only replica' });
    await projector.kill();
  }, 180_000);
});
