import { createDb, type Db } from '@billstream/db';
import { startIntegrationStack, TEST_ENVIRONMENT, TEST_TENANT, type IntegrationStack } from '../../support/stack';
import { monthStart, taxedInvoiceHelpers, type TaxedInvoice } from './taxes-invoices';

/**
 * Tax rates (docs/api/taxes.md) and customers' tax identity (docs/api/customers.md#tax-identity) as a client meets them: through the gateway, on the whole stack
 * with real Postgres and Kafka. Bad input gets a 400 naming the field and writes nothing; the
 * percentage is fixed for life; archiving keeps the rate readable.
 */
describe('tax rates through the gateway (real Postgres and Kafka)', () => {
  let stack: IntegrationStack;
  let db: Db;
  const count = async () => Number((await db('tax_rates').count({ n: '*' }).first())!.n);

  beforeAll(async () => {
    stack = await startIntegrationStack({ extra: { env: { BILLING_INTERVAL_MS: '0' } } });
    db = createDb({ databaseUrl: stack.database.url, schema: 'billing', poolMax: 2 });
  });
  afterAll(async () => {
    await db?.destroy();
    await stack?.stop();
  });

  it('creates, reads, lists, renames and archives a rate; its code is unique in the environment', async () => {
    const created = await stack.api.post('/v1/tax_rates', { code: 'DE_VAT_19', name: 'Umsatzsteuer', percentage: '19.0', tax_type: 'VAT', country: 'DE' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ id: expect.stringMatching(/^txr_/), code: 'DE_VAT_19', percentage: '19', tax_type: 'VAT', country: 'DE', region: null, active: true, description: null });
    const ca = await stack.api.post('/v1/tax_rates', { code: 'US_CA', name: 'California', percentage: '7.25', tax_type: 'SALES_TAX', country: 'US', region: 'US-CA', description: 'State rate' });
    expect(ca.body).toMatchObject({ percentage: '7.25', region: 'US-CA' });

    const again = await stack.api.post('/v1/tax_rates', { code: 'DE_VAT_19', name: 'Twice', percentage: '19', tax_type: 'VAT' });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ details: { field: 'code' } });

    expect((await stack.api.get(`/v1/tax_rates/${created.body.id}`)).body).toEqual(created.body);
    const de = await stack.api.get('/v1/tax_rates?country=DE');
    expect(de.body.items.map((r: { id: string }) => r.id)).toEqual([created.body.id]);

    const renamed = await stack.api.put(`/v1/tax_rates/${created.body.id}`, { name: 'USt 19 %', description: 'Regelsteuersatz' });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ name: 'USt 19 %', description: 'Regelsteuersatz', percentage: '19' });
    // The percentage is fixed: a new percentage is a new rate.
    const moved = await stack.api.put(`/v1/tax_rates/${created.body.id}`, { percentage: '20' });
    expect(moved.status).toBe(400);
    expect(JSON.stringify(moved.body)).toContain('percentage');

    const archived = await stack.api.delete(`/v1/tax_rates/${created.body.id}`);
    expect(archived.status).toBe(200);
    expect(archived.body).toMatchObject({ id: created.body.id, active: false });
    expect((await stack.api.delete(`/v1/tax_rates/${created.body.id}`)).body).toMatchObject({ active: false });
    expect((await stack.api.get('/v1/tax_rates?active=true')).body.items.map((r: { id: string }) => r.id)).toEqual([ca.body.id]);
    expect((await stack.api.get('/v1/tax_rates?active=false')).body.items.map((r: { id: string }) => r.id)).toEqual([created.body.id]);

    // Another environment sees none of them.
    const sandbox = stack.api.withKey(await stack.keyFor(TEST_TENANT, 'sandbox', ['*']));
    expect((await sandbox.get('/v1/tax_rates')).body.items).toEqual([]);
    expect((await sandbox.get(`/v1/tax_rates/${ca.body.id}`)).status).toBe(404);
    expect(TEST_ENVIRONMENT).not.toBe('sandbox');
  });

  it('answers bad input with a 400 naming the field and writes nothing', async () => {
    const before = await count();
    const good = { code: 'X', name: 'X', percentage: '10', tax_type: 'VAT' };
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ...good, percentage: '100.0001' }, 'percentage'],
      [{ ...good, percentage: '7.12345' }, 'percentage'],
      [{ ...good, percentage: '-1' }, 'percentage'],
      [{ ...good, percentage: 10 }, 'percentage'],
      [{ ...good, tax_type: 'VATT' }, 'tax_type'],
      [{ ...good, country: 'de' }, 'country'],
      [{ ...good, country: 'US', region: 'CA' }, 'region'],
      [{ ...good, country: 'DE', region: 'US-CA' }, 'region'],
      [{ ...good, region: 'US-CA' }, 'region'],
      [{ ...good, code: 'has space' }, 'code'],
      [{ ...good, name: '' }, 'name'],
      [{ ...good, rate: '1' }, 'rate'],
    ];
    for (const [body, field] of cases) {
      const res = await stack.api.post('/v1/tax_rates', body);
      expect([res.status, JSON.stringify(res.body)]).toEqual([400, expect.stringContaining(field)]);
    }
    expect((await stack.api.get('/v1/tax_rates?active=maybe')).status).toBe(400);
    expect((await stack.api.put('/v1/tax_rates/txr_missing', { name: 'Nope' })).status).toBe(404);
    expect((await stack.api.delete('/v1/tax_rates/txr_missing')).status).toBe(404);
    expect(await count()).toBe(before);
  });

  it('needs taxes:write to change rates and taxes:read to read them', async () => {
    const reader = stack.api.withKey(await stack.keyFor(TEST_TENANT, TEST_ENVIRONMENT, ['taxes:read']));
    expect((await reader.get('/v1/tax_rates')).status).toBe(200);
    expect((await reader.post('/v1/tax_rates', { code: 'R', name: 'R', percentage: '1', tax_type: 'OTHER' })).status).toBe(403);
    const other = stack.api.withKey(await stack.keyFor(TEST_TENANT, TEST_ENVIRONMENT, ['plans:read']));
    expect((await other.get('/v1/tax_rates')).status).toBe(403);
  });

  describe("a customer's tax identity", () => {
    const valid = [
      { type: 'eu_vat', value: 'DE136695976' },
      { type: 'eu_vat', value: 'EL094259216' },
      { type: 'gb_vat', value: 'GB980780684' },
      { type: 'ch_vat', value: 'CHE-116.281.710 MWST' },
      { type: 'no_vat', value: 'NO 995 525 828 MVA' },
      { type: 'au_abn', value: '51 824 753 556' },
      { type: 'nz_gst', value: '49-091-850' },
      { type: 'ca_bn', value: '12302 6635' },
      { type: 'in_gst', value: '27AAPFU0939F1ZV' },
      { type: 'us_ein', value: '04-2103594' },
    ];
    const customers = async () => Number((await customerDb('customers').count({ n: '*' }).first())!.n);
    let customerDb: Db;
    beforeAll(() => {
      customerDb = createDb({ databaseUrl: stack.database.url, schema: 'customer', poolMax: 1 });
    });
    afterAll(async () => {
      await customerDb?.destroy();
    });

    it('keeps valid tax ids of every type and the exemption, and changes them on update', async () => {
      const created = await stack.api.post('/v1/customers', { external_customer_id: `taxed-${Date.now()}`, address_country: 'DE', tax_ids: valid, tax_exempt: 'reverse' });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ tax_ids: valid, tax_exempt: 'reverse' });
      const plain = await stack.api.post('/v1/customers', { external_customer_id: `untaxed-${Date.now()}` });
      expect(plain.body).toMatchObject({ tax_ids: [], tax_exempt: 'none' });
      const updated = await stack.api.put(`/v1/customers/${created.body.id}`, { tax_ids: [{ type: 'br_cnpj', value: '16.727.230/0001-97' }], tax_exempt: 'exempt' });
      expect(updated.status).toBe(200);
      expect((await stack.api.get(`/v1/customers/${created.body.id}`)).body).toMatchObject({ tax_ids: [{ type: 'br_cnpj', value: '16.727.230/0001-97' }], tax_exempt: 'exempt' });
    });

    it('refuses a bad tax id by format or checksum with a 400 naming it, and writes nothing', async () => {
      const before = await customers();
      const cases: Array<[unknown, string]> = [
        [[{ type: 'eu_vat', value: 'DE136695977' }], 'tax_ids.0.value'],
        [[valid[0], { type: 'gb_vat', value: 'GB98078068' }], 'tax_ids.1.value'],
        [[{ type: 'eu_vat', value: 'XX123456789' }], 'tax_ids.0.value'],
        [[{ type: 'us_ein', value: '04-2103594' }, { type: 'us_ein', value: '042103594' }], 'tax_ids.1.value'],
        [[{ type: 'xx_vat', value: '1' }], 'tax_ids.0.type'],
        [[{ type: 'eu_vat' }], 'tax_ids.0.value'],
      ];
      for (const [taxIds, field] of cases) {
        const res = await stack.api.post('/v1/customers', { external_customer_id: `bad-tax-${Date.now()}`, tax_ids: taxIds });
        expect([res.status, res.body.error?.details?.field ?? JSON.stringify(res.body)]).toEqual([400, field]);
      }
      const exempt = await stack.api.post('/v1/customers', { external_customer_id: `bad-exempt-${Date.now()}`, tax_exempt: 'always' });
      expect(exempt.status).toBe(400);
      expect(JSON.stringify(exempt.body)).toContain('tax_exempt');
      expect(await customers()).toBe(before);
      const existing = (await stack.api.post('/v1/customers', { external_customer_id: `keep-${Date.now()}`, tax_ids: [valid[2]] })).body;
      const refused = await stack.api.put(`/v1/customers/${existing.id}`, { tax_ids: [{ type: 'gb_vat', value: 'GB980780685' }] });
      expect(refused.status).toBe(400);
      expect((await stack.api.get(`/v1/customers/${existing.id}`)).body.tax_ids).toEqual([valid[2]]);
    });
  });
  describe('tax fields and settings', () => {
    const fieldOf = (res: { status: number; body: { error?: { details?: { field?: string } } } }) => [res.status, res.body.error?.details?.field ?? JSON.stringify(res.body)];
    const fixed = { type: 'FIXED', currency: 'eur', amount: '10', billing_model: 'FLAT_FEE', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE' };
    let active: string;
    let archived: string;
    beforeAll(async () => {
      active = (await stack.api.post('/v1/tax_rates', { code: `F_ACTIVE`, name: 'Active', percentage: '10', tax_type: 'VAT' })).body.id;
      archived = (await stack.api.post('/v1/tax_rates', { code: `F_ARCHIVED`, name: 'Archived', percentage: '5', tax_type: 'VAT' })).body.id;
      await stack.api.delete(`/v1/tax_rates/${archived}`);
    });

    it('answers the tax settings with their defaults, merges a change and keeps the secret unanswered', async () => {
      const before = await stack.api.get('/v1/settings/billing');
      expect(before.body.tax).toEqual({ enabled: false, default_behavior: 'exclusive', rounding: 'LINE', reverse_charge: { enabled: false, seller_country: null }, provider: 'BUILT_IN', url: null, secret_set: false });
      const put = await stack.api.put('/v1/settings/billing', {
        tax: { rounding: 'TOTAL', reverse_charge: { enabled: true, seller_country: 'DE' }, secret: 'a-secret-of-sixteen+' },
        invoice_settings: { company_name: 'Seller GmbH', address: '1 Hafenstrasse, Hamburg', country: 'DE', tax_id: 'DE136695976' },
      });
      expect(put.status).toBe(200);
      expect(put.body.tax).toEqual({ enabled: false, default_behavior: 'exclusive', rounding: 'TOTAL', reverse_charge: { enabled: true, seller_country: 'DE' }, provider: 'BUILT_IN', url: null, secret_set: true });
      expect(put.body.invoice_settings).toMatchObject({ country: 'DE', tax_id: 'DE136695976' });
      expect(JSON.stringify(put.body)).not.toContain('a-secret-of-sixteen+');
      const merged = await stack.api.put('/v1/settings/billing', { tax: { rounding: 'LINE', reverse_charge: { enabled: false } } });
      expect(merged.body.tax).toMatchObject({ rounding: 'LINE', reverse_charge: { enabled: false, seller_country: 'DE' }, secret_set: true });
    });

    it('refuses bad tax settings with a 400 naming the field and saves nothing', async () => {
      const version = (await stack.api.get('/v1/settings/billing')).body.version;
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ tax: { rounding: 'HALF' } }, 'tax.rounding'],
        [{ tax: { default_behavior: 'both' } }, 'tax.default_behavior'],
        [{ tax: { enabled: 'yes' } }, 'tax.enabled'],
        [{ tax: { reverse_charge: { enabled: true, seller_country: null } } }, 'tax.reverse_charge.seller_country'],
        [{ tax: { reverse_charge: { seller_country: 'US' } } }, 'tax.reverse_charge.seller_country'],
        [{ tax: { reverse_charge: { seller_country: 'de' } } }, 'tax.reverse_charge.seller_country'],
        [{ tax: { provider: 'HTTP', url: null } }, 'tax.url'],
        [{ tax: { provider: 'HTTP', url: 'https://tax.example.com', secret: null } }, 'tax.secret'],
        [{ tax: { provider: 'AVALARA' } }, 'tax.provider'],
        [{ tax: { url: 'ftp://x' } }, 'tax.url'],
        [{ tax: { secret: 'short' } }, 'tax.secret'],
        [{ tax: { percent: 1 } }, 'tax'],
        [{ invoice_settings: { country: 'Germany' } }, 'invoice_settings.country'],
      ];
      for (const [body, field] of cases) {
        const res = await stack.api.put('/v1/settings/billing', body);
        expect([res.status, JSON.stringify(res.body)]).toEqual([400, expect.stringContaining(field)]);
      }
      expect((await stack.api.get('/v1/settings/billing')).body.version).toBe(version);
    });

    it("keeps a customer's, a plan's and a price's tax rates and a price's tax behavior", async () => {
      const customer = await stack.api.post('/v1/customers', { external_customer_id: `rated-${Date.now()}`, tax_rate_ids: [active] });
      expect([customer.status, customer.body.tax_rate_ids]).toEqual([201, [active]]);
      expect((await stack.api.post('/v1/customers', { external_customer_id: `unrated-${Date.now()}` })).body.tax_rate_ids).toEqual([]);
      const cleared = await stack.api.put(`/v1/customers/${customer.body.id}`, { tax_rate_ids: [] });
      expect(cleared.body.tax_rate_ids).toEqual([]);
      const plan = await stack.api.post('/v1/plans', { name: 'Taxed', tax_rate_ids: [active], prices: [{ ...fixed, tax_rate_ids: [active], tax_behavior: 'inclusive' }, fixed] });
      expect(plan.status).toBe(201);
      expect(plan.body.tax_rate_ids).toEqual([active]);
      expect(plan.body.prices.map((p: { tax_rate_ids: string[]; tax_behavior: string | null }) => [p.tax_rate_ids, p.tax_behavior])).toEqual([[[active], 'inclusive'], [[], null]]);
      const price = await stack.api.post('/v1/prices', { ...fixed, plan_id: plan.body.id, tax_behavior: 'exclusive' });
      expect([price.status, price.body.tax_behavior, price.body.tax_rate_ids]).toEqual([201, 'exclusive', []]);
      const renamed = await stack.api.put(`/v1/plans/${plan.body.id}`, { tax_rate_ids: [] });
      expect([renamed.status, renamed.body.tax_rate_ids]).toEqual([200, []]);
    });

    it('refuses unknown or archived tax rates with a 400 naming the field, and writes nothing', async () => {
      const customers = Number((await db.raw('SELECT count(*) AS n FROM customer.customers')).rows[0].n);
      const plans = Number((await db('plans').count({ n: '*' }).first())!.n);
      const prices = Number((await db('prices').count({ n: '*' }).first())!.n);
      const missing = 'txr_01JDQ8Z6Y4K2M9N3P5R7T9V1X3';
      expect(fieldOf(await stack.api.post('/v1/customers', { external_customer_id: `bad-rate-${Date.now()}`, tax_rate_ids: [active, missing] }))).toEqual([400, 'tax_rate_ids.1']);
      expect(fieldOf(await stack.api.post('/v1/customers', { external_customer_id: `bad-rate-${Date.now()}`, tax_rate_ids: [archived] }))).toEqual([400, 'tax_rate_ids.0']);
      const bad = await stack.api.post('/v1/customers', { external_customer_id: `bad-rate-${Date.now()}`, tax_rate_ids: [active, active] });
      expect([bad.status, JSON.stringify(bad.body)]).toEqual([400, expect.stringContaining('tax_rate_ids')]);
      const malformed = await stack.api.post('/v1/customers', { external_customer_id: `bad-rate-${Date.now()}`, tax_rate_ids: ['VAT19'] });
      expect([malformed.status, JSON.stringify(malformed.body)]).toEqual([400, expect.stringContaining('tax_rate_ids')]);
      expect(fieldOf(await stack.api.post('/v1/plans', { name: 'Bad', tax_rate_ids: [missing] }))).toEqual([400, 'tax_rate_ids.0']);
      expect(fieldOf(await stack.api.post('/v1/plans', { name: 'Bad', prices: [fixed, { ...fixed, tax_rate_ids: [active, archived] }] }))).toEqual([400, 'prices.1.tax_rate_ids.1']);
      const badBehavior = await stack.api.post('/v1/plans', { name: 'Bad', prices: [{ ...fixed, tax_behavior: 'included' }] });
      expect([badBehavior.status, JSON.stringify(badBehavior.body)]).toEqual([400, expect.stringContaining('tax_behavior')]);
      const plan = (await stack.api.post('/v1/plans', { name: 'Kept' })).body;
      expect(fieldOf(await stack.api.post('/v1/prices', { ...fixed, plan_id: plan.id, tax_rate_ids: [archived] }))).toEqual([400, 'tax_rate_ids.0']);
      expect(fieldOf(await stack.api.put(`/v1/plans/${plan.id}`, { tax_rate_ids: [missing] }))).toEqual([400, 'tax_rate_ids.0']);
      const customer = (await stack.api.post('/v1/customers', { external_customer_id: `keep-rate-${Date.now()}`, tax_rate_ids: [active] })).body;
      expect(fieldOf(await stack.api.put(`/v1/customers/${customer.id}`, { tax_rate_ids: [archived] }))).toEqual([400, 'tax_rate_ids.0']);
      expect((await stack.api.get(`/v1/customers/${customer.id}`)).body.tax_rate_ids).toEqual([active]);
      expect((await stack.api.get(`/v1/plans/${plan.id}`)).body.tax_rate_ids).toEqual([]);
      expect(Number((await db.raw('SELECT count(*) AS n FROM customer.customers')).rows[0].n)).toBe(customers + 1);
      expect(Number((await db('plans').count({ n: '*' }).first())!.n)).toBe(plans + 1);
      expect(Number((await db('prices').count({ n: '*' }).first())!.n)).toBe(prices);
    });
  });

  describe('invoices bearing tax', () => {
    let t: Awaited<ReturnType<typeof taxedInvoiceHelpers>>;
    const rates: Record<string, string> = {};
    const byCode = (i: TaxedInvoice) => [...i.tax_breakdown].sort((a, b) => a.code.localeCompare(b.code)).map((b) => [b.code, b.country, b.region, b.taxable_amount, b.amount]);
    beforeAll(async () => {
      t = await taxedInvoiceHelpers(stack, db);
      rates.de19 = await t.rate('INV_DE_19', '19', { country: 'DE' });
      rates.reduced = await t.rate('INV_REDUCED_7', '7');
      rates.ten = await t.rate('INV_TEN', '10');
      rates.ca = await t.rate('INV_US_CA', '7.25', { country: 'US', region: 'US-CA' });
      rates.us0 = await t.rate('INV_US_0', '0', { country: 'US' });
      await t.settings({ enabled: true, rounding: 'LINE', reverse_charge: { enabled: true, seller_country: 'DE' } });
    });

    it('taxes a cycle invoice line by line (LINE) by price and by address, and wallet credits pay the taxed total', async () => {
      const cust = await t.customer({ address_country: 'DE' });
      const walletId = await t.wallet(cust, '100');
      const invoices = await t.subscribe(cust, [['10.01'], ['3.33', { tax_rate_ids: [rates.reduced] }]], monthStart(-1));
      const cycle = invoices.find((i) => i.billing_reason === 'SUBSCRIPTION_CYCLE')!;
      expect(cycle.line_items.map((l) => [l.net_amount, l.tax_behavior, l.tax_amount, l.taxes.map((x) => [x.code, x.taxable_amount, x.amount])])).toEqual([
        [1001, 'exclusive', 190, [['INV_DE_19', 1001, 190]]],
        [333, 'exclusive', 23, [['INV_REDUCED_7', 333, 23]]],
      ]);
      expect(cycle).toMatchObject({ subtotal: 1334, total_tax: 213, total_excluding_tax: 1334, total: 1547, reverse_charge: false, tax_exempt_reason: null });
      expect(cycle.buyer_tax).toEqual({ tax_exempt: 'none', tax_ids: [], address_country: 'DE', address_state: null });
      expect(byCode(cycle)).toEqual([['INV_DE_19', 'DE', null, 1001, 190], ['INV_REDUCED_7', null, null, 333, 23]]);
      t.adds(cycle);
      for (const i of invoices) {
        const paid = await t.finalize(i.id);
        // Credits pay each line's net and its tax: nothing is left due.
        expect(paid).toMatchObject({ status: 'paid', total_prepaid_credits_applied: 1547, total: 0, amount_due: 0, total_tax: 213 });
        expect(paid.line_items.map((l) => l.prepaid_credits_applied)).toEqual([1191, 356]);
      }
      expect((await t.api.get(`/v1/wallets/${walletId}/balance`)).body.credit_balance).toBe('69.06');
    });

    it('taxes a created invoice once per rate (TOTAL), an inclusive price holds its tax exactly, and 0 % rates show', async () => {
      await t.settings({ rounding: 'TOTAL' });
      const cust = await t.customer({ address_country: 'US', address_state: 'CA' });
      const [created] = await t.subscribe(cust, [['0.05', { tax_rate_ids: [rates.ten] }], ['0.05', { tax_rate_ids: [rates.ten] }], ['0.05', { tax_rate_ids: [rates.ten] }], ['10', { tax_rate_ids: [rates.de19], tax_behavior: 'inclusive' }], ['1']]);
      expect(created!.billing_reason).toBe('SUBSCRIPTION_CREATE');
      // 3 × 0.5 of exact tax: 1.5 rounds to 2 once, spread by largest remainder (LINE would bill 3).
      expect(created!.line_items.map((l) => [l.net_amount, l.tax_behavior, l.tax_amount])).toEqual([
        [5, 'exclusive', 1],
        [5, 'exclusive', 1],
        [5, 'exclusive', 0],
        [1000, 'inclusive', 160],
        [100, 'exclusive', 7],
      ]);
      const inclusive = created!.line_items[3]!;
      expect(inclusive.taxes[0]!.taxable_amount + inclusive.tax_amount).toBe(inclusive.net_amount);
      expect(byCode(created!)).toEqual([['INV_DE_19', 'DE', null, 840, 160], ['INV_TEN', null, null, 15, 2], ['INV_US_0', 'US', null, 100, 0], ['INV_US_CA', 'US', 'US-CA', 100, 7]]);
      // The inclusive tax is inside the line; only the exclusive 9 adds to the total.
      expect(created).toMatchObject({ subtotal: 1115, total_tax: 169, total_excluding_tax: 955, total: 1124 });
      t.adds(created!);
      expect(await t.finalize(created!.id)).toMatchObject({ status: 'finalized', total: 1124, amount_due: 1124, total_tax: 169 });
      await t.settings({ rounding: 'LINE' });
      // Finalized, it keeps what it bore; the settings move new drafts only.
      expect(await t.get(created!.id)).toMatchObject({ total_tax: 169 });
      const [line] = await t.subscribe(cust, [['0.05', { tax_rate_ids: [rates.ten] }], ['0.05', { tax_rate_ids: [rates.ten] }], ['0.05', { tax_rate_ids: [rates.ten] }]]);
      expect(line!.line_items.map((l) => l.tax_amount)).toEqual([1, 1, 1]);
    });

    it('taxes neither an exempt nor a reverse-charged buyer (their own setting, or the EU rule)', async () => {
      const cases: Array<[Record<string, unknown>, boolean, string | null]> = [
        [{ address_country: 'DE', tax_exempt: 'exempt' }, false, 'customer_exempt'],
        [{ address_country: 'US', address_state: 'CA', tax_exempt: 'reverse' }, true, null],
        [{ address_country: 'GR', tax_ids: [{ type: 'eu_vat', value: 'EL094259216' }] }, true, null],
      ];
      for (const [body, reverse, reason] of cases) {
        const [draft] = await t.subscribe(await t.customer(body), [['10', { tax_rate_ids: [rates.de19] }]]);
        expect([draft!.total_tax, draft!.total, draft!.reverse_charge, draft!.tax_exempt_reason, draft!.line_items[0]!.taxes]).toEqual([0, 1000, reverse, reason, []]);
        expect(draft!.buyer_tax).toMatchObject({ tax_exempt: body.tax_exempt ?? 'none' });
      }
    });

    it('taxes the upcoming invoice and a plan change, previewed and applied, by the same code', async () => {
      const cust = await t.customer({ address_country: 'DE' });
      const [created] = await t.subscribe(cust, [['10']]);
      const sub = created!.subscription_id;
      const upcoming = (await t.api.get(`/v1/subscriptions/${sub}/upcoming-invoice`)).body as TaxedInvoice;
      expect(upcoming).toMatchObject({ subtotal: 1000, total_tax: 190, total: 1190 });
      t.adds(upcoming);
      const planB = (await t.api.post('/v1/plans', { name: 'Taxed B', prices: [{ type: 'FIXED', currency: 'usd', amount: '30', billing_model: 'FLAT_FEE', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE' }] })).body;
      const preview = await t.api.post(`/v1/subscriptions/${sub}/change/preview`, { plan_id: planB.id });
      expect(preview.status).toBe(200);
      const applied = await t.api.post(`/v1/subscriptions/${sub}/change`, { plan_id: planB.id });
      expect(applied.status).toBe(200);
      const changed = ((await t.api.get(`/v1/invoices?subscription_id=${sub}&limit=100`)).body.items as TaxedInvoice[]).find((i) => i.billing_reason === 'SUBSCRIPTION_UPDATE')!;
      for (const i of [preview.body.invoice as TaxedInvoice, changed]) {
        t.adds(i);
        expect(i.total_tax).toBeGreaterThan(0);
        expect(i.tax_breakdown.map((b) => b.code)).toEqual(['INV_DE_19']);
        // total = subtotal − discount + excess credit + exclusive tax − credits (all lines exclusive here).
        expect(i.total).toBe(i.subtotal + i.total_tax - i.total_prepaid_credits_applied + (i as unknown as { excess_credit: number }).excess_credit);
      }
    });

    it('returns exactly the tax with credit notes, cumulatively per line and rate (partial, whole, inclusive, and a void)', async () => {
      const cust = await t.customer({ address_country: 'DE' });
      const make = async () => t.finalize((await t.subscribe(cust, [['10.01'], ['3.33', { tax_behavior: 'inclusive' }]]))[0]!.id);
      const invoice = await make();
      expect(invoice.line_items.map((l) => [l.net_amount, l.tax_amount])).toEqual([[1001, 190], [333, 53]]);
      expect(invoice).toMatchObject({ total: 1524, amount_due: 1524, total_tax: 243 });
      const [exclusive, inclusive] = invoice.line_items;
      const note = async (lines: Array<[string, number]>) => {
        const res = await t.api.post('/v1/credit_notes', { invoice_id: invoice.id, reason: 'OTHER', lines: lines.map(([id, amount]) => ({ invoice_line_item_id: id, amount })) });
        expect(res.status).toBe(201);
        return [res.body.amount, res.body.tax_amount, res.body.total, res.body.pre_payment_amount, res.body.lines.map((l: { taxes: Array<{ tax_rate_id: string; amount: number }> }) => l.taxes)];
      };
      // 190 × 300/1001 = 56.9 → 57; then round(190 × 700/1001) − 57 = 133 − 57; the rest returns what is left of 190.
      expect(await note([[exclusive!.id, 300]])).toEqual([300, 57, 357, 357, [[{ tax_rate_id: rates.de19, amount: 57 }]]]);
      expect(await note([[exclusive!.id, 400]])).toEqual([400, 76, 476, 476, [[{ tax_rate_id: rates.de19, amount: 76 }]]]);
      expect(await note([[exclusive!.id, 301], [inclusive!.id, 333]])).toEqual([634, 110, 691, 691, [[{ tax_rate_id: rates.de19, amount: 57 }], [{ tax_rate_id: rates.de19, amount: 53 }]]]);
      expect(await t.get(invoice.id)).toMatchObject({ status: 'paid', amount_due: 0, pre_payment_credit_notes_amount: 1524 });
      // The void's note returns the rest of each line with the rest of its tax.
      const second = await make();
      const part = await t.api.post('/v1/credit_notes', { invoice_id: second.id, reason: 'OTHER', lines: [{ invoice_line_item_id: second.line_items[0]!.id, amount: 300 }] });
      expect(part.body).toMatchObject({ tax_amount: 57, total: 357 });
      expect((await t.api.post(`/v1/invoices/${second.id}/void`, {})).status).toBe(200);
      const notes = (await t.api.get(`/v1/credit_notes?invoice_id=${second.id}`)).body.items as Array<{ origin: string; tax_amount: number; total: number }>;
      expect(notes.map((n) => [n.origin, n.tax_amount, n.total])).toEqual([['MANUAL', 57, 357], ['INVOICE_VOID', 133 + 53, 701 + 133 + 333]]);
      expect(notes.reduce((s, n) => s + n.tax_amount, 0)).toBe(second.total_tax);
    });

    it('takes rates and the buyer as they are at finalization: a draft moves, a finalized invoice never does', async () => {
      const cust = await t.customer({ address_country: 'DE', address_state: 'BY' });
      const [draft] = await t.subscribe(cust, [['20']]);
      expect(draft!.total_tax).toBe(380);
      const bavaria = await t.rate('INV_DE_BY', '1', { country: 'DE', region: 'DE-BY' });
      const finalized = await t.finalize(draft!.id);
      expect(finalized).toMatchObject({ total_tax: 400, total: 2400, amount_due: 2400 });
      expect(byCode(finalized)).toEqual([['INV_DE_19', 'DE', null, 2000, 380], ['INV_DE_BY', 'DE', 'DE-BY', 2000, 20]]);
      expect((await t.api.delete(`/v1/tax_rates/${bavaria}`)).status).toBe(200);
      expect((await t.api.put(`/v1/customers/${cust}`, { tax_exempt: 'exempt' })).status).toBe(200);
      await t.billingKnows(cust, 'exempt');
      expect(await t.get(finalized.id)).toEqual(finalized);
      const [later] = await t.subscribe(cust, [['20']]);
      expect(later).toMatchObject({ total_tax: 0, tax_exempt_reason: 'customer_exempt', buyer_tax: { tax_exempt: 'exempt' } });
    });
  });
});
