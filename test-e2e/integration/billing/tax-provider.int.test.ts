import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createDb, type Db } from '@billstream/db';
import { startIntegrationStack, TEST_TENANT, type IntegrationStack } from '../../support/stack';
import type { TaxedInvoice } from './taxes-invoices';

/**
 * The HTTP tax provider (docs/api/taxes.md#http-provider) as a client meets it: through the
 * gateway on real Postgres and Kafka, with a real tax service this test starts on 127.0.0.1 (a
 * node http server of our contract that checks each request's X-Service-Signature). The happy
 * path bears the provider's tax on the finalized invoice and its lines; a timeout, a wrong amount
 * and an outage each leave the draft `tax_status: failed` (a manual finalize answers 400 with
 * details.tax_status failed, no finalized event), and once the provider answers again the period job
 * (POST /v1/cron/bill-subscriptions) retries it and finalizes it with the provider's tax.
 * TAX_PROVIDER_TIMEOUT_MS (default 5000) is 1000 here, and the retry backoff starts at 200 ms.
 */
const SECRET = 'tax-provider-secret-0123456789';
const TIMEOUT_MS = 1000;

type Mode = 'ok' | 'slow' | 'wrong';
interface TaxRequest {
  invoice_id: string;
  currency: string;
  seller: Record<string, unknown>;
  buyer: { address: Record<string, unknown> | null; tax_ids: unknown[]; tax_exempt: string };
  lines: Array<{ id: string; amount: number; tax_behavior: string; price_id: string | null; tax_code?: string }>;
}

/** 19 % "VAT" on every line: of the net (exclusive) or inside it (inclusive), half up. */
const vatOf = (l: TaxRequest['lines'][number]): number => (l.tax_behavior === 'inclusive' ? Math.round((l.amount * 19) / 119) : Math.round((l.amount * 19) / 100));

/** The tax service: answers by `mode`, records every request and whether its signature matched. */
class TaxService {
  mode: Mode = 'ok';
  readonly requests: Array<{ body: TaxRequest; signed: boolean }> = [];
  private server?: http.Server;
  port = 0;

  async start(): Promise<void> {
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const expected = Buffer.from(createHmac('sha256', Buffer.from(SECRET, 'utf8')).update(raw, 'utf8').digest('hex'));
        const given = Buffer.from(String(req.headers['x-service-signature'] ?? ''));
        const signed = given.length === expected.length && timingSafeEqual(given, expected);
        const body = JSON.parse(raw) as TaxRequest;
        this.requests.push({ body, signed });
        if (!signed) return void res.writeHead(401).end();
        const answer = { lines: body.lines.map((l) => ({ id: l.id, taxes: [{ name: 'VAT', percentage: '19', amount: vatOf(l) + (this.mode === 'wrong' ? 5 : 0) }] })) };
        const send = () => {
          if (!res.destroyed) res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
        };
        if (this.mode === 'slow') setTimeout(send, TIMEOUT_MS + 1500).unref();
        else send();
      });
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  /** Down: nothing listens on its port (connection refused). */
  async stop(): Promise<void> {
    const s = this.server;
    this.server = undefined;
    if (!s) return;
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/tax`;
  }
}

describe('the HTTP tax provider through the gateway (real Postgres and Kafka, a real tax service)', () => {
  let stack: IntegrationStack;
  let db: Db;
  let api: IntegrationStack['api'];
  const service = new TaxService();
  let n = 0;

  beforeAll(async () => {
    await service.start();
    stack = await startIntegrationStack({
      extra: { env: { BILLING_INTERVAL_MS: '0', TAX_PROVIDER_TIMEOUT_MS: String(TIMEOUT_MS), TAX_PROVIDER_RETRY_BASE_MS: '200', TAX_PROVIDER_RETRY_MAX_MS: '1000', BILLING_CLAIM_LEASE_MS: '1000' } },
    });
    db = createDb({ databaseUrl: stack.database.url, schema: 'billing', poolMax: 2 });
    api = stack.api.withKey(await stack.keyFor(TEST_TENANT, 'tax-provider', ['*']));
    const put = await api.put('/v1/settings/billing', {
      tax: { enabled: true, provider: 'HTTP', url: service.url, secret: SECRET },
      invoice_settings: { company_name: 'Seller GmbH', address: '1 Hafenstrasse, Hamburg', country: 'DE', tax_id: 'DE136695976' },
    });
    expect(put.status).toBe(200);
    expect(put.body.tax).toMatchObject({ enabled: true, provider: 'HTTP', url: service.url, secret_set: true });
    expect(JSON.stringify(put.body)).not.toContain(SECRET);
  });
  afterAll(async () => {
    await service.stop();
    await db?.destroy();
    await stack?.stop();
  });

  const cron = async () => expect((await api.post('/v1/cron/bill-subscriptions', {})).status).toBe(200);
  const get = async (id: string): Promise<TaxedInvoice & { tax_status: string }> => (await api.get(`/v1/invoices/${id}`)).body;
  const finalizedEvents = async (id: string) => (await db('outbox').where({ message_key: id })).filter((e: { value: string }) => JSON.parse(e.value).type === 'invoice.update.finalized').length;

  /** A customer in Germany subscribed now to a plan of 10.00 (exclusive) and 11.90 (inclusive): its SUBSCRIPTION_CREATE draft. */
  const draft = async (): Promise<TaxedInvoice & { tax_status: string }> => {
    const customer = await api.post('/v1/customers', { external_customer_id: `tax-http-${++n}-${Date.now()}`, address_country: 'DE', tax_ids: [{ type: 'eu_vat', value: 'DE136695976' }] });
    expect(customer.status).toBe(201);
    const price = (amount: string, extra: Record<string, unknown> = {}) => ({ type: 'FIXED', currency: 'eur', amount, billing_model: 'FLAT_FEE', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE', ...extra });
    const plan = await api.post('/v1/plans', { name: `HTTP taxed ${n}`, prices: [price('10'), price('11.90', { tax_behavior: 'inclusive' })] });
    expect(plan.status).toBe(201);
    const sub = await api.post('/v1/subscriptions', { customer_id: customer.body.id, plan_id: plan.body.id, start_date: new Date().toISOString() });
    expect(sub.status).toBe(201);
    const [created] = (await api.get(`/v1/invoices?subscription_id=${sub.body.id}&limit=10`)).body.items;
    // Made inside a transaction: untaxed and pending until the provider answers.
    expect(created).toMatchObject({ status: 'draft', tax_status: 'pending', total_tax: 0 });
    return created;
  };

  /** The provider's tax on a finalized invoice and its lines, stored as the built-in result. */
  const expectProviderTax = (i: TaxedInvoice & { tax_status: string }) => {
    expect(i).toMatchObject({ status: 'finalized', tax_status: 'ok', subtotal: 2190, total_tax: 190 + 190, total_excluding_tax: 2000, total: 2190 + 190, amount_due: 2380 });
    expect(i.line_items.map((l) => [l.net_amount, l.tax_behavior, l.tax_amount, l.taxes.map((t) => [t.code, t.percentage, t.taxable_amount, t.amount])])).toEqual([
      [1000, 'exclusive', 190, [['VAT', '19', 1000, 190]]],
      [1190, 'inclusive', 190, [['VAT', '19', 1000, 190]]],
    ]);
    const id = i.line_items[0]!.taxes[0]!.tax_rate_id;
    expect(id).toMatch(/^ext_[0-9a-f]{20}$/);
    expect(i.tax_breakdown).toEqual([{ tax_rate_id: id, code: 'VAT', country: null, region: null, percentage: '19', taxable_amount: 2000, amount: 380 }]);
    expect(i.buyer_tax).toEqual({ tax_exempt: 'none', tax_ids: [{ type: 'eu_vat', value: 'DE136695976' }], address_country: 'DE', address_state: null });
  };

  it('refuses HTTP without its url or secret, or with a url that is not http(s), with a 400 naming the field, saving nothing', async () => {
    const other = stack.api.withKey(await stack.keyFor(TEST_TENANT, 'tax-provider-bad', ['*']));
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ provider: 'HTTP' }, 'tax.url'],
      [{ provider: 'HTTP', url: 'https://tax.example.com/v1' }, 'tax.secret'],
      [{ provider: 'HTTP', url: 'ftp://tax.example.com', secret: SECRET }, 'tax.url'],
      [{ provider: 'HTTP', url: 'https://tax.example.com/v1', secret: 'short' }, 'tax.secret'],
    ];
    for (const [tax, field] of cases) {
      const res = await other.put('/v1/settings/billing', { tax });
      expect([res.status, res.body.error?.details?.field]).toEqual([400, field]);
    }
    expect((await other.get('/v1/settings/billing')).body).toMatchObject({ version: 0, tax: { provider: 'BUILT_IN', url: null, secret_set: false } });
  });

  it('finalizes a draft with the tax the provider answered, on the invoice and its lines, after a signed request of our contract', async () => {
    const d = await draft();
    service.requests.length = 0;
    await cron();
    const finalized = await get(d.id);
    expectProviderTax(finalized);
    expect(service.requests.length).toBeGreaterThanOrEqual(1);
    expect(service.requests.every((r) => r.signed)).toBe(true);
    const { body } = service.requests.at(-1)!;
    expect(body).toEqual({
      invoice_id: d.id,
      currency: 'eur',
      seller: { company_name: 'Seller GmbH', address: '1 Hafenstrasse, Hamburg', country: 'DE', tax_id: 'DE136695976' },
      buyer: { address: expect.objectContaining({ address_country: 'DE' }), tax_ids: [{ type: 'eu_vat', value: 'DE136695976' }], tax_exempt: 'none' },
      lines: [
        { id: d.line_items[0]!.id, amount: 1000, tax_behavior: 'exclusive', price_id: expect.stringMatching(/^price_/) },
        { id: d.line_items[1]!.id, amount: 1190, tax_behavior: 'inclusive', price_id: expect.stringMatching(/^price_/) },
      ],
    });
    expect(await finalizedEvents(d.id)).toBe(1);
    // A credit note returns the provider's tax per line and rate, as it does the built-in one.
    const note = await api.post('/v1/credit_notes', { invoice_id: d.id, reason: 'OTHER', lines: [{ invoice_line_item_id: finalized.line_items[0]!.id, amount: 1000 }] });
    expect(note.status).toBe(201);
    expect(note.body).toMatchObject({ amount: 1000, tax_amount: 190, total: 1190 });
    expect(note.body.lines[0].taxes).toMatchObject([{ tax_rate_id: finalized.line_items[0]!.taxes[0]!.tax_rate_id, amount: 190 }]);
  });

  it('voids a draft the provider failed (it was never finalized)', async () => {
    const d = await draft();
    service.mode = 'wrong';
    try {
      await cron();
      expect(await get(d.id)).toMatchObject({ status: 'draft', tax_status: 'failed' });
    } finally {
      service.mode = 'ok';
    }
    const voided = await api.post(`/v1/invoices/${d.id}/void`, {});
    expect([voided.status, voided.body.status]).toEqual([200, 'voided']);
    await cron();
    expect(await get(d.id)).toMatchObject({ status: 'voided', invoice_number: null });
    expect(await finalizedEvents(d.id)).toBe(0);
  });

  it('taxes the upcoming invoice and a plan change preview by the provider, and answers them untaxed with tax_status failed while it is down', async () => {
    const d = await draft();
    await cron();
    const sub = d.subscription_id!;
    const planBefore = (await api.get(`/v1/subscriptions/${sub}`)).body.plan_id;
    service.requests.length = 0;
    const upcoming = await api.get(`/v1/subscriptions/${sub}/upcoming-invoice`);
    expect(upcoming.status).toBe(200);
    // The next period's ADVANCE charges, taxed by the provider's answer (asked once, signed).
    expect(upcoming.body).toMatchObject({ tax_status: 'ok', subtotal: 2190, total_tax: 380, total_excluding_tax: 2000, total: 2380 });
    expect(service.requests.map((r) => [r.body.lines.map((l) => l.amount), r.signed])).toEqual([[[1000, 1190], true]]);
    const plan = await api.post('/v1/plans', { name: `HTTP taxed bigger ${n}`, prices: [{ type: 'FIXED', currency: 'eur', amount: '50', billing_model: 'FLAT_FEE', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE' }] });
    expect(plan.status).toBe(201);
    const change = { plan_id: plan.body.id, proration_behavior: 'create_prorations' };
    const preview = await api.post(`/v1/subscriptions/${sub}/change/preview`, change);
    expect(preview.status).toBe(200);
    // The new plan's charge for the rest of the period, taxed by the provider's 19 % (its answer, asked once).
    const shown = preview.body.invoice as TaxedInvoice & { tax_status: string };
    const charged = shown.line_items.filter((l) => l.net_amount > 0);
    expect(charged.length).toBeGreaterThan(0);
    expect(shown.tax_status).toBe('ok');
    expect(charged.map((l) => l.tax_amount)).toEqual(charged.map((l) => Math.round((l.net_amount * 19) / 100)));
    expect(shown.total_tax).toBe(charged.reduce((t, l) => t + l.tax_amount, 0));
    expect(shown.total_tax).toBeGreaterThan(0);
    expect(service.requests.length).toBe(2);
    expect(service.requests[1]!.body.lines.map((l) => l.amount)).toEqual(charged.map((l) => l.net_amount));
    await service.stop();
    try {
      const down = await api.get(`/v1/subscriptions/${sub}/upcoming-invoice`);
      expect(down.status).toBe(200);
      expect(down.body).toMatchObject({ tax_status: 'failed', subtotal: 2190, total_tax: 0 });
      const previewDown = await api.post(`/v1/subscriptions/${sub}/change/preview`, change);
      expect(previewDown.status).toBe(200);
      expect(previewDown.body.invoice).toMatchObject({ tax_status: 'failed', subtotal: shown.subtotal, total_tax: 0 });
    } finally {
      await service.start();
    }
    // Nothing was stored: the subscription still bills its plan, and has no other invoice.
    expect((await api.get(`/v1/subscriptions/${sub}`)).body.plan_id).toBe(planBefore);
    expect((await api.get(`/v1/invoices?subscription_id=${sub}&limit=10`)).body.items.map((i: { id: string }) => i.id)).toEqual([d.id]);
    // The change itself bills what its preview showed, with the same tax.
    const applied = await api.post(`/v1/subscriptions/${sub}/change`, change);
    expect(applied.status).toBe(200);
    expect(applied.body.invoice).toMatchObject({ tax_status: 'ok', subtotal: shown.subtotal, total_tax: shown.total_tax, total_excluding_tax: shown.total_excluding_tax });
  });

  const failures: Array<[string, () => Promise<void>, () => Promise<void>]> = [
    [
      'a provider slower than the timeout',
      async () => {
        service.mode = 'slow';
      },
      async () => {
        service.mode = 'ok';
      },
    ],
    [
      'a wrong amount in the answer',
      async () => {
        service.mode = 'wrong';
      },
      async () => {
        service.mode = 'ok';
      },
    ],
    ['a provider that is down', () => service.stop(), () => service.start()],
  ];

  it.each(failures)('leaves the draft tax_status failed on %s, then retries it and finalizes it with the provider tax once it answers', async (_, fail, recover) => {
    const d = await draft();
    await fail();
    try {
      await cron();
      const failed = await get(d.id);
      expect(failed).toMatchObject({ status: 'draft', tax_status: 'failed', total_tax: 0 });
      // The period job holds it off for its backoff.
      const row = await db('invoices').where({ id: d.id }).first();
      expect(row.tax_attempts).toBeGreaterThanOrEqual(1);
      expect(new Date(row.work_lease_until).getTime()).toBeGreaterThan(Date.now() - 1000);
      const manual = await api.post(`/v1/invoices/${d.id}/finalize`, {});
      expect(manual.status).toBe(400);
      expect(manual.body.error).toMatchObject({ internal_error: 'validation_error', details: { field: 'tax_status', tax_status: 'failed', invoice_id: d.id } });
      expect(await get(d.id)).toMatchObject({ status: 'draft', tax_status: 'failed', invoice_number: null });
      expect(await finalizedEvents(d.id)).toBe(0);
    } finally {
      await recover();
    }
    let current = await get(d.id);
    for (const until = Date.now() + 20_000; current.status === 'draft' && Date.now() < until; current = await get(d.id)) {
      await new Promise((r) => setTimeout(r, 300));
      await cron();
    }
    expectProviderTax(current);
    expect(await finalizedEvents(d.id)).toBe(1);
  });
});

describe('the HTTP tax provider at draft, within a grace window (BILLING_FINALIZE_DELAY)', () => {
  let stack: IntegrationStack;
  const service = new TaxService();

  beforeAll(async () => {
    await service.start();
    stack = await startIntegrationStack({ extra: { env: { BILLING_INTERVAL_MS: '0', BILLING_FINALIZE_DELAY: '1h', TAX_PROVIDER_TIMEOUT_MS: String(TIMEOUT_MS) } } });
    const put = await stack.api.put('/v1/settings/billing', { tax: { enabled: true, provider: 'HTTP', url: service.url, secret: SECRET } });
    expect(put.status).toBe(200);
  });
  afterAll(async () => {
    await service.stop();
    await stack?.stop();
  });

  it('taxes a pending draft by the period job before its grace window ends, then again at its finalization', async () => {
    const customer = await stack.api.post('/v1/customers', { external_customer_id: `tax-http-grace-${Date.now()}`, address_country: 'DE' });
    const plan = await stack.api.post('/v1/plans', { name: 'HTTP grace', prices: [{ type: 'FIXED', currency: 'eur', amount: '10', billing_model: 'FLAT_FEE', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE' }] });
    const sub = await stack.api.post('/v1/subscriptions', { customer_id: customer.body.id, plan_id: plan.body.id, start_date: new Date().toISOString() });
    expect(sub.status).toBe(201);
    const [created] = (await stack.api.get(`/v1/invoices?subscription_id=${sub.body.id}`)).body.items;
    expect(created).toMatchObject({ status: 'draft', tax_status: 'pending', total_tax: 0 });
    service.requests.length = 0;
    expect((await stack.api.post('/v1/cron/bill-subscriptions', {})).status).toBe(200);
    const taxed = (await stack.api.get(`/v1/invoices/${created.id}`)).body;
    // Still a draft (its window has not ended), bearing the provider's tax.
    expect(taxed).toMatchObject({ status: 'draft', tax_status: 'ok', total_tax: 190, total: 1190 });
    expect(service.requests.map((r) => [r.body.invoice_id, r.signed])).toEqual([[created.id, true]]);
    const finalized = await stack.api.post(`/v1/invoices/${created.id}/finalize`, {});
    expect(finalized.status).toBe(200);
    expect(finalized.body).toMatchObject({ status: 'finalized', tax_status: 'ok', total_tax: 190, total: 1190 });
    // Asked again just before it was finalized.
    expect(service.requests.length).toBe(2);
  });
});
