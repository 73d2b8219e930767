import { createDb, type Db } from '@billstream/db';
import { startIntegrationStack, TEST_ENVIRONMENT, TEST_TENANT, type IntegrationStack } from '../../support/stack';

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
});
