import type { Db } from '@billstream/db';
import { TEST_TENANT, type IntegrationStack } from '../../support/stack';

/**
 * Invoices bearing tax (docs/api/taxes.md#invoices-bearing-tax) as a client meets them, on the
 * stack of taxes.int.test.ts (one stack for the file), in an environment of their own so the
 * settings they turn on touch no other test: cycle and created invoices under LINE and TOTAL
 * rounding, inclusive prices, exempt and reverse-charged buyers, rates taken at finalization,
 * credits paying the taxed total, and credit notes returning exactly the tax.
 */
interface Line {
  id: string;
  amount: number;
  net_amount: number;
  tax_amount: number;
  tax_behavior: string | null;
  prepaid_credits_applied: number;
  taxes: Array<{ tax_rate_id: string; code: string; percentage: string; taxable_amount: number; amount: number }>;
}
export interface TaxedInvoice {
  id: string;
  status: string;
  billing_reason: string;
  subscription_id: string;
  subtotal: number;
  total: number;
  total_tax: number;
  total_excluding_tax: number;
  amount_due: number;
  total_prepaid_credits_applied: number;
  reverse_charge: boolean;
  tax_exempt_reason: string | null;
  buyer_tax: { tax_exempt: string; tax_ids: unknown[]; address_country: string | null; address_state: string | null } | null;
  tax_breakdown: Array<{ tax_rate_id: string; code: string; country: string | null; region: string | null; percentage: string; taxable_amount: number; amount: number }>;
  line_items: Line[];
}

const DAY = 86_400_000;
export const monthStart = (k: number): string => {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + k, 1)).toISOString();
};
const price = (amount: string, extra: Record<string, unknown> = {}) => ({ type: 'FIXED', currency: 'usd', amount, billing_model: 'FLAT_FEE', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE', ...extra });

/** Helpers on the stack, in environment `taxes-invoices`. */
export async function taxedInvoiceHelpers(stack: IntegrationStack, db: Db) {
  const api = stack.api.withKey(await stack.keyFor(TEST_TENANT, 'taxes-invoices', ['*']));
  let n = 0;
  const rate = async (code: string, percentage: string, extra: Record<string, unknown> = {}): Promise<string> => {
    const res = await api.post('/v1/tax_rates', { code, name: code, percentage, tax_type: 'VAT', ...extra });
    expect(res.status).toBe(201);
    return res.body.id;
  };
  const settings = async (tax: Record<string, unknown>) => {
    const res = await api.put('/v1/settings/billing', { tax, invoice_settings: { company_name: 'Seller GmbH', address: '1 Hafenstrasse, Hamburg', country: 'DE', tax_id: 'DE136695976' } });
    expect(res.status).toBe(200);
  };
  const customer = async (body: Record<string, unknown>): Promise<string> => {
    const res = await api.post('/v1/customers', { external_customer_id: `taxed-inv-${++n}-${Date.now()}`, ...body });
    expect(res.status).toBe(201);
    return res.body.id;
  };
  const wallet = async (customerId: string, credits: string): Promise<string> => {
    const res = await api.post('/v1/wallets', { customer_id: customerId, currency: 'usd', initial_credits_to_load: credits, config: { allowed_price_types: ['ALL'] } });
    expect(res.status).toBe(201);
    return res.body.id;
  };
  /** A subscription of a plan of `prices` (amount and price fields) from `start`: its invoices, oldest first. */
  const subscribe = async (customerId: string, prices: Array<[string, Record<string, unknown>?]>, start = new Date().toISOString()): Promise<TaxedInvoice[]> => {
    const plan = await api.post('/v1/plans', { name: `Taxed ${n}`, prices: prices.map(([a, extra]) => price(a, extra)) });
    expect(plan.status).toBe(201);
    const sub = await api.post('/v1/subscriptions', { customer_id: customerId, plan_id: plan.body.id, start_date: start });
    expect(sub.status).toBe(201);
    return (await api.get(`/v1/invoices?subscription_id=${sub.body.id}&limit=100`)).body.items;
  };
  const finalize = async (id: string): Promise<TaxedInvoice> => {
    const res = await api.post(`/v1/invoices/${id}/finalize`, {});
    expect(res.status).toBe(200);
    return res.body;
  };
  const get = async (id: string): Promise<TaxedInvoice> => (await api.get(`/v1/invoices/${id}`)).body;
  /** Waits until billing's copy of the customer (from customer-events) says `taxExempt`. */
  const billingKnows = async (customerId: string, taxExempt: string) => {
    for (const until = Date.now() + 15_000; Date.now() < until; await new Promise((r) => setTimeout(r, 50))) {
      const row = await db('customers').where({ id: customerId }).first();
      if (row?.tax_exempt === taxExempt) return;
    }
    throw new Error(`billing never learned that ${customerId} is ${taxExempt}`);
  };
  /** Σ line tax = total_tax = Σ breakdown, on every invoice (docs/api/taxes.md#arithmetic). */
  const adds = (i: TaxedInvoice) => {
    const lines = i.line_items.reduce((s, l) => s + l.tax_amount, 0);
    expect([lines, i.tax_breakdown.reduce((s, b) => s + b.amount, 0)]).toEqual([i.total_tax, i.total_tax]);
    for (const l of i.line_items) expect(l.taxes.reduce((s, t) => s + t.amount, 0)).toBe(l.tax_amount);
  };
  return { api, rate, settings, customer, wallet, subscribe, finalize, get, billingKnows, adds, DAY };
}
