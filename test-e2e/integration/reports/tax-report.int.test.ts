import { parse } from 'csv-parse/sync';
import type { ApiClient } from '@billstream/testing';
import { finishedTask } from '../billing/tasks-support';
import { startIntegrationStack, TEST_TENANT, type IntegrationStack } from '../../support/stack';

/**
 * The tax report (docs/api/taxes.md#tax-report) and its TAX_REPORT export, through the gateway on
 * real Postgres and Kafka: taxed invoices at two rates in two currencies, inclusive and exclusive
 * lines, partial credit notes, a void (its credit note takes the rest back), a voided note (it
 * drops out), a reverse-charged EU buyer and an exempt one, and a draft (not in it). The report's
 * figures are checked against sums the test makes itself from the invoices and notes it reads.
 */
interface Breakdown {
  tax_rate_id: string;
  taxable_amount: number;
  amount: number;
}
interface Invoice {
  id: string;
  status: string;
  currency: string;
  total_tax: number;
  reverse_charge: boolean;
  tax_exempt_reason: string | null;
  tax_breakdown: Breakdown[];
  line_items: Array<{ id: string; net_amount: number; tax_amount: number; tax_behavior: string | null }>;
}
interface Note {
  status: string;
  currency: string;
  amount: number;
  tax_amount: number;
  lines: Array<{ invoice_line_item_id: string; amount: number; tax_amount: number; taxes: Array<{ tax_rate_id: string; amount: number }> }>;
}
type Row = Record<string, string | number | null>;

jest.setTimeout(120_000);

describe('tax report through the gateway (real Postgres and Kafka)', () => {
  let stack: IntegrationStack;
  let api: ApiClient;
  const rates: Record<string, string> = {};
  const invoiceIds: string[] = [];
  let from: string;
  let n = 0;

  const rate = async (code: string, percentage: string, extra: Record<string, unknown> = {}) => {
    const res = await api.post('/v1/tax_rates', { code, name: code, percentage, tax_type: 'VAT', ...extra });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };
  const customer = async (body: Record<string, unknown>) => {
    const res = await api.post('/v1/customers', { external_customer_id: `tax-report-${++n}`, ...body });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };
  /** A customer's first invoice of a plan billed in advance (SUBSCRIPTION_CREATE), finalized unless `draft`. */
  const invoice = async (customerId: string, currency: string, prices: Array<[string, Record<string, unknown>?]>, draft = false): Promise<Invoice> => {
    const plan = await api.post('/v1/plans', {
      name: `Tax report ${n}`,
      prices: prices.map(([amount, extra]) => ({ type: 'FIXED', currency, amount, billing_model: 'FLAT_FEE', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE', ...extra })),
    });
    expect(plan.status).toBe(201);
    expect((await api.post('/v1/subscriptions', { customer_id: customerId, plan_id: plan.body.id })).status).toBe(201);
    const [first] = (await api.get(`/v1/invoices?customer_id=${customerId}`)).body.items as Invoice[];
    if (draft) return first!;
    const finalized = await api.post(`/v1/invoices/${first!.id}/finalize`, {});
    expect(finalized.status).toBe(200);
    invoiceIds.push(first!.id);
    return finalized.body;
  };
  const note = async (inv: Invoice, lines: Array<[number, number]>) => {
    const res = await api.post('/v1/credit_notes', { invoice_id: inv.id, reason: 'OTHER', lines: lines.map(([i, amount]) => ({ invoice_line_item_id: inv.line_items[i]!.id, amount })) });
    expect(res.status).toBe(201);
    return res.body as { id: string; tax_amount: number };
  };

  beforeAll(async () => {
    stack = await startIntegrationStack({ extra: { env: { BILLING_INTERVAL_MS: '0' } } });
    api = stack.api.withKey(await stack.keyFor(TEST_TENANT, 'tax-report', ['*']));
    from = new Date(Date.now() - 1000).toISOString();
    rates.de19 = await rate('TR_DE_19', '19', { country: 'DE' });
    rates.de7 = await rate('TR_DE_7', '7', { country: 'DE' });
    // 7 % only where a price names it: the address rule takes every active rate of the country.
    expect((await api.delete(`/v1/tax_rates/${rates.de7}`)).status).toBe(200);
    rates.seven = await rate('TR_REDUCED_7', '7');
    const settings = await api.put('/v1/settings/billing', { tax: { enabled: true, reverse_charge: { enabled: true, seller_country: 'DE' } }, invoice_settings: { company_name: 'Seller GmbH', address: '1 Hafenstrasse, Hamburg', country: 'DE', tax_id: 'DE136695976' } });
    expect(settings.status).toBe(200);

    const de = await customer({ address_country: 'DE' });
    const usd = await invoice(de, 'usd', [['10.01'], ['3.33', { tax_rate_ids: [rates.seven] }]]);
    expect(usd.tax_breakdown.map((b) => [b.tax_rate_id, b.taxable_amount, b.amount])).toEqual([
      [rates.de19, 1001, 190],
      [rates.seven, 333, 23],
    ]);
    const eurBuyer = await customer({ address_country: 'DE' });
    const eur = await invoice(eurBuyer, 'eur', [['20', { tax_behavior: 'inclusive' }], ['5', { tax_rate_ids: [rates.seven] }], ['8']]);
    expect(eur.total_tax).toBeGreaterThan(0);
    // Partial notes: of an inclusive line, of an exclusive one, and one of two lines.
    await note(eur, [[0, 700]]);
    await note(eur, [[1, 150], [2, 333]]);
    // A voided note drops out.
    const voided = await note(usd, [[0, 500]]);
    expect((await api.post(`/v1/credit_notes/${voided.id}/void`, {})).status).toBe(200);
    await note(usd, [[1, 100]]);
    // A void after a partial note: its credit note takes back the rest.
    const gone = await invoice(await customer({ address_country: 'DE' }), 'usd', [['7'], ['2.5', { tax_rate_ids: [rates.seven] }]]);
    await note(gone, [[0, 300]]);
    expect((await api.post(`/v1/invoices/${gone.id}/void`, {})).status).toBe(200);
    // An EU buyer with a VAT id, reverse charged; an exempt buyer; a draft.
    const fr = await invoice(await customer({ address_country: 'FR', tax_ids: [{ type: 'eu_vat', value: 'FR40303265045' }] }), 'eur', [['50'], ['10']]);
    expect([fr.reverse_charge, fr.total_tax]).toEqual([true, 0]);
    await note(fr, [[0, 1200]]);
    const exempt = await invoice(await customer({ address_country: 'DE', tax_exempt: 'exempt' }), 'usd', [['12']]);
    expect(exempt.tax_exempt_reason).toBe('customer_exempt');
    const draft = await invoice(await customer({ address_country: 'DE' }), 'usd', [['99']], true);
    expect([draft.status, draft.total_tax]).toEqual(['draft', 1881]);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  /** The report computed here from the invoices and credit notes as the API answers them. */
  async function expected(): Promise<{ rows: Map<string, Row>; totals: Map<string, number> }> {
    const rows = new Map<string, Row>();
    const totals = new Map<string, number>();
    const add = (currency: string, treatment: string, rateId: string | null, field: string, taxable: number, tax: number) => {
      const key = `${currency} ${treatment} ${rateId ?? ''}`;
      const row = rows.get(key) ?? { invoiced_taxable: 0, invoiced_tax: 0, credited_taxable: 0, credited_tax: 0 };
      row[`${field}_taxable`] = Number(row[`${field}_taxable`]) + taxable;
      row[`${field}_tax`] = Number(row[`${field}_tax`]) + tax;
      rows.set(key, row);
    };
    for (const id of invoiceIds) {
      const inv = (await api.get(`/v1/invoices/${id}`)).body as Invoice;
      const untaxed = inv.reverse_charge ? 'reverse_charge' : inv.tax_exempt_reason ? 'exempt' : undefined;
      if (untaxed) add(inv.currency, untaxed, null, 'invoiced', inv.line_items.filter((l) => l.net_amount > 0).reduce((s, l) => s + l.net_amount, 0), 0);
      for (const b of inv.tax_breakdown) add(inv.currency, 'taxed', b.tax_rate_id, 'invoiced', b.taxable_amount, b.amount);
      totals.set(inv.currency, (totals.get(inv.currency) ?? 0) + inv.total_tax);
      const notes = (await api.get(`/v1/credit_notes?invoice_id=${id}&limit=100`)).body.items as Note[];
      for (const cn of notes.filter((x) => x.status === 'issued')) {
        totals.set(cn.currency, totals.get(cn.currency)! - cn.tax_amount);
        if (untaxed) add(cn.currency, untaxed, null, 'credited', cn.amount, 0);
        for (const l of cn.lines) {
          const inclusive = inv.line_items.find((x) => x.id === l.invoice_line_item_id)!.tax_behavior === 'inclusive';
          for (const t of l.taxes) add(cn.currency, 'taxed', t.tax_rate_id, 'credited', l.amount - (inclusive ? l.tax_amount : 0), t.amount);
        }
      }
    }
    return { rows, totals };
  }

  const report = async (query: string) => {
    const res = await api.get(`/v1/reports/taxes?${query}`);
    expect(res.status).toBe(200);
    return res.body as { from: string; to: string; currency: string | null; rows: Row[]; totals: Array<{ currency: string; invoiced_tax: number; credited_tax: number; net_tax: number }> };
  };

  it('answers per currency and rate what invoices bore less what credit notes returned, and totals equal the invoices less the notes', async () => {
    const to = new Date(Date.now() + 60_000).toISOString();
    const got = await report(`from=${from}&to=${to}`);
    expect([got.from, got.to, got.currency]).toEqual([from, to, null]);
    const want = await expected();
    expect(got.rows.map((r) => `${r.currency} ${r.treatment} ${r.tax_rate_id ?? ''}`)).toEqual([
      `eur taxed ${rates.de19}`,
      `eur taxed ${rates.seven}`,
      'eur reverse_charge ',
      `usd taxed ${rates.de19}`,
      `usd taxed ${rates.seven}`,
      'usd exempt ',
    ]);
    for (const r of got.rows) {
      const w = want.rows.get(`${r.currency} ${r.treatment} ${r.tax_rate_id ?? ''}`)!;
      expect(r).toMatchObject({ ...w, net_taxable: Number(w.invoiced_taxable) - Number(w.credited_taxable), net_tax: Number(w.invoiced_tax) - Number(w.credited_tax) });
    }
    expect(got.rows.find((r) => r.tax_rate_id === rates.de19 && r.currency === 'usd')).toMatchObject({ code: 'TR_DE_19', tax_type: 'VAT', country: 'DE', region: null, percentage: '19' });
    expect(got.rows.find((r) => r.treatment === 'reverse_charge')).toMatchObject({ invoiced_taxable: 6000, invoiced_tax: 0, credited_taxable: 1200, net_taxable: 4800, net_tax: 0, tax_rate_id: null, code: null });
    expect(got.rows.find((r) => r.treatment === 'exempt')).toMatchObject({ invoiced_taxable: 1200, net_tax: 0 });
    // The void took the whole invoice back: the usd 19 % row nets only the first invoice's.
    const usd19 = got.rows.find((r) => r.tax_rate_id === rates.de19 && r.currency === 'usd')!;
    expect([usd19.invoiced_tax, usd19.credited_tax, usd19.net_tax]).toEqual([190 + 133, 133, 190]);
    expect(got.totals).toEqual(
      ['eur', 'usd'].map((currency) => {
        const rows = got.rows.filter((r) => r.currency === currency);
        const invoiced = rows.reduce((s, r) => s + Number(r.invoiced_tax), 0);
        const credited = rows.reduce((s, r) => s + Number(r.credited_tax), 0);
        return { currency, invoiced_tax: invoiced, credited_tax: credited, net_tax: want.totals.get(currency) };
      }),
    );
    expect(got.totals.every((t) => t.net_tax === t.invoiced_tax - t.credited_tax && t.net_tax > 0)).toBe(true);

    // One currency, any case; a window before everything is empty; another environment sees nothing.
    const eur = await report(`from=${from}&to=${to}&currency=EUR`);
    expect([eur.currency, eur.rows, eur.totals]).toEqual(['eur', got.rows.filter((r) => r.currency === 'eur'), got.totals.filter((t) => t.currency === 'eur')]);
    expect((await report(`from=2026-01-01T00:00:00Z&to=${from}`)).rows).toEqual([]);
    const other = stack.api.withKey(await stack.keyFor(TEST_TENANT, 'tax-report-other', ['*']));
    expect((await other.get(`/v1/reports/taxes?from=${from}&to=${to}`)).body).toMatchObject({ rows: [], totals: [] });
  });

  it('exports the same figures as a TAX_REPORT CSV, amounts in minor units and as decimals', async () => {
    const to = new Date(Date.now() + 60_000).toISOString();
    const got = await report(`from=${from}&to=${to}`);
    const created = await api.post('/v1/tasks', { task_type: 'EXPORT', entity_type: 'TAX_REPORT', file_type: 'CSV', filters: { start_time: from, end_time: to } });
    expect(created.status).toBe(202);
    expect(created.body).toMatchObject({ entity_type: 'TAX_REPORT', filters: { start_time: from, end_time: to } });
    const task = await finishedTask(api, created.body.id);
    expect(task).toMatchObject({ task_status: 'COMPLETED', total_records: got.rows.length });
    const file = await api.get(`/v1/tasks/${task.id}/download`);
    expect([file.status, String(file.headers['content-type'])]).toEqual([200, expect.stringContaining('text/csv')]);
    const lines = parse(file.text, { columns: true }) as Array<Record<string, string>>;
    const amounts = ['invoiced_taxable', 'invoiced_tax', 'credited_taxable', 'credited_tax', 'net_taxable', 'net_tax'];
    expect(file.text.split('\n')[0]).toBe(
      ['currency', 'treatment', 'tax_rate_id', 'code', 'tax_type', 'country', 'region', 'percentage', ...amounts.flatMap((a) => [a, `${a}_decimal`])].join(','),
    );
    expect(lines).toEqual(
      got.rows.map((r) => {
        const row: Record<string, string> = {};
        for (const [k, v] of Object.entries(r)) row[k] = v === null ? '' : String(v);
        for (const a of amounts) row[`${a}_decimal`] = (Number(r[a]) / 100).toFixed(2);
        return row;
      }),
    );
    // One currency, as JSONL.
    const jsonl = await api.post('/v1/tasks', { task_type: 'EXPORT', entity_type: 'TAX_REPORT', file_type: 'JSONL', filters: { start_time: from, end_time: to, currency: 'usd' } });
    const done = await finishedTask(api, jsonl.body.id);
    const text = (await api.get(`/v1/tasks/${done.id}/download`)).text;
    const items = text.trim().split('\n').map((l) => JSON.parse(l) as Row);
    expect(items.map((i) => [i.tax_rate_id, i.net_tax, i.net_tax_decimal])).toEqual(got.rows.filter((r) => r.currency === 'usd').map((r) => [r.tax_rate_id, r.net_tax, (Number(r.net_tax) / 100).toFixed(2)]));
  });

  it('answers bad input with a 400 naming the field, and needs taxes:read', async () => {
    const cases: Array<[string, string]> = [
      ['to=2026-02-01T00:00:00Z', 'from'],
      ['from=2026-01-01T00:00:00Z', 'to'],
      ['from=2026-01-01&to=2026-02-01T00:00:00Z', 'from'],
      ['from=2026-01-01T00:00:00Z&to=yesterday', 'to'],
      ['from=2026-02-01T00:00:00Z&to=2026-02-01T00:00:00Z', 'to'],
      ['from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z', 'to'],
      ['from=2025-01-01T00:00:00Z&to=2026-01-03T00:00:00Z', 'to'],
      ['from=2026-01-01T00:00:00Z&to=2026-02-01T00:00:00Z&currency=xyz', 'currency'],
      ['from=2026-01-01T00:00:00Z&to=2026-02-01T00:00:00Z&country=DE', 'country'],
    ];
    for (const [query, field] of cases) {
      const res = await api.get(`/v1/reports/taxes?${query}`);
      expect([query, res.status, res.body.error?.internal_error, res.body.error?.details?.field]).toEqual([query, 400, 'validation_error', field]);
    }
    // A leap year's 366 days are one window.
    expect((await api.get('/v1/reports/taxes?from=2028-01-01T00:00:00Z&to=2029-01-01T00:00:00Z')).status).toBe(200);

    const taskCases: Array<[Record<string, unknown>, string]> = [
      [{ entity_type: 'TAX_REPORT', filters: { end_time: '2026-02-01T00:00:00Z' } }, 'filters.start_time'],
      [{ entity_type: 'TAX_REPORT' }, 'filters.start_time'],
      [{ entity_type: 'TAX_REPORT', filters: { start_time: '2026-01-01T00:00:00Z' } }, 'filters.end_time'],
      [{ entity_type: 'TAX_REPORT', filters: { start_time: '2024-01-01T00:00:00Z', end_time: '2026-01-01T00:00:00Z' } }, 'filters.end_time'],
      [{ entity_type: 'TAX_REPORT', filters: { start_time: '2026-01-01T00:00:00Z', end_time: '2026-02-01T00:00:00Z', currency: 'xyz' } }, 'filters.currency'],
      [{ entity_type: 'TAX_REPORT', filters: { start_time: '2026-01-01T00:00:00Z', end_time: '2026-02-01T00:00:00Z', external_customer_id: 'x' } }, 'filters.external_customer_id'],
      [{ entity_type: 'INVOICES', filters: { currency: 'usd' } }, 'filters.currency'],
    ];
    const tasksBefore = (await api.get('/v1/tasks?limit=1')).body.pagination;
    for (const [body, field] of taskCases) {
      const res = await api.post('/v1/tasks', { task_type: 'EXPORT', file_type: 'CSV', ...body });
      expect([field, res.status, res.body.error?.details?.field]).toEqual([field, 400, field]);
    }
    expect((await api.get('/v1/tasks?limit=1')).body.pagination).toEqual(tasksBefore);

    const invoicesOnly = stack.api.withKey(await stack.keyFor(TEST_TENANT, 'tax-report', ['invoices:read', 'tasks:read', 'tasks:write']));
    const denied = await invoicesOnly.get('/v1/reports/taxes?from=2026-01-01T00:00:00Z&to=2026-02-01T00:00:00Z');
    expect(denied.status).toBe(403);
    const task = await invoicesOnly.post('/v1/tasks', { task_type: 'EXPORT', entity_type: 'TAX_REPORT', file_type: 'CSV', filters: { start_time: '2026-01-01T00:00:00Z', end_time: '2026-02-01T00:00:00Z' } });
    expect([task.status, task.body.error?.details?.permission]).toEqual([403, 'taxes:read']);
  });
});
