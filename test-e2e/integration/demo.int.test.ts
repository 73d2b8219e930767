import fs from 'node:fs';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { startIntegrationStack, type IntegrationStack } from '../support/stack';

/**
 * `npm run demo` against a whole stack (real Postgres and Kafka), as a user runs it beside
 * `WEBHOOK_ALLOW_INSECURE=true npm start`: every part of it must work on this stack (no part
 * skipped or refused), and it must bill last month's usage through a plan and invoices.
 */
const DEMO = path.resolve(__dirname, '../../scripts/demo.js');

interface Invoice {
  billing_reason: string;
  status: string;
  invoice_number: string | null;
  subtotal: number;
  total_prepaid_credits_applied: number;
  amount_due: number;
  amount_remaining: number;
  post_payment_credit_notes_amount: number;
  line_items: Array<{ price_type: string; line_type: string; amount: number; prepaid_credits_applied: number }>;
}

/** Runs the demo in a child process; the stack lives in this one, so never block its event loop. */
function runDemo(url: string, key: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [DEMO], {
      env: { ...process.env, BILLSTREAM_URL: url, BILLSTREAM_API_KEY: key, DEMO_EVENTS: '600' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, out }));
  });
}

// The demo waits up to 60 s for the aggregator and 15 s for webhooks on a slow machine.
jest.setTimeout(180_000);

describe('npm run demo', () => {
  let stack: IntegrationStack;
  let key: string;

  beforeAll(async () => {
    stack = await startIntegrationStack({ extra: { env: { WEBHOOK_ALLOW_INSECURE: 'true' } } });
    // A tenant of its own, so that the invoices it finds are the demo's.
    key = await stack.keyFor('tenant-demo', 'development');
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('subscribes three customers to a plan, invoices last month with credits on the usage lines, records a payment, then upgrades a fourth mid-month with a coupon, a credit grant and a credit note, taxes a domestic and a reverse-charged customer with their tax report, and receives the webhooks', async () => {
    const { code, out } = await runDemo(stack.embedded.url, key);
    const report = `demo output:\n${out}`;
    expect({ code, report }).toMatchObject({ code: 0 });
    // No part skipped (!) or refused (✗).
    expect(out).not.toMatch(/^\s+[!✗] /m);

    const numbers = [...out.matchAll(/^\s+(INV-\d{6}-\d{5}) {2}(Acme Corp|Globex Inc|Initech LLC) {2}/gm)].map((m) => m[2]).sort();
    expect(numbers).toEqual(['Acme Corp', 'Globex Inc', 'Initech LLC']);
    expect(out.match(/^\s+Platform fee\s+1\s+49\s+\$49\.00\s+-$/gm)).toHaveLength(3);
    expect(out.match(/^\s+✓ token line quantity [\d,]+ = the Tokens meter's [\d,]+ for the period$/gm)).toHaveLength(3);
    expect(out).toMatch(/✓ pay_\w+ {2}Acme Corp: \$49\.00 OFFLINE .*succeeded/);
    expect(out).toMatch(/✓ INV-\d{6}-\d{5}: paid, payment succeeded, paid \$49\.00, remaining \$0\.00/);
    // This month: a coupon, a credit grant in a new wallet, a prorated upgrade, its payment, a credit note.
    expect(out).toMatch(/✓ coup_\w+ {2}coupon LAUNCH20-\S+: 20 % off/);
    expect(out).toMatch(/\$29\.00 − \$5\.80 coupon = \$23\.20/);
    expect(out).toMatch(/✓ cgapp_\w+ {2}applied for .*: 25 credits into wallet_\w+/);
    expect(out).toMatch(/CREDIT \+25 {2}SUBSCRIPTION_CREDIT_GRANT/);
    expect(out).toMatch(/✓ proration credit -\$\d+\.\d\d = −\$23\.20 \(the Starter fee after the coupon\)/);
    expect(out).toMatch(/✓ Growth fee \$\d+\.\d\d = \$99\.00 × 0\.\d+/);
    expect(out).toMatch(/✓ coupon -\$\d+\.\d\d = 20 % of the charges/);
    expect(out).toMatch(/✓ INV-\d{6}-\d{5}: paid, paid \$[\d.,]+ \+ credits \$25\.00, remaining \$0\.00/);
    expect(out).toMatch(/✓ CN-\d{6}-\d{5} {2}\$[\d.,]+ on "Starter tokens/);
    // Billing V: a threshold invoice, a card payment settled by the processor's webhook, the PDF.
    expect(out).toMatch(/✓ inv_\w+ \(SUBSCRIPTION_THRESHOLD, (draft|finalized)\)/);
    expect(out).toMatch(/✓ pay_\w+ {2}\$8\.00 PROVIDER \(stripe\), pending/);
    expect(out).toMatch(/POST \/v1\/payments\/pay_\w+\/succeed: succeeded \(pi_demo_/);
    expect(out).toMatch(/✓ INV-\d{6}-\d{5}: paid, paid \$8\.00, remaining \$0\.00/);
    const pdf = /✓ PDF of INV-\d{6}-\d{5} \([\d,]+ bytes, application\/pdf\) written to (\S+\.pdf)/.exec(out);
    expect(pdf).not.toBeNull();
    expect(fs.readFileSync(pdf![1]!).subarray(0, 5).toString()).toBe('%PDF-');
    expect(out).toMatch(/the same bytes on every request \(frozen at finalization\): identical/);
    // Taxes: German VAT on a domestic customer, the reverse charge on a French business, the tax report and its CSV.
    expect(out).toMatch(/✓ taxes on \(rounding LINE, prices exclusive of tax\), reverse charge for EU businesses outside DE/);
    expect(out).toMatch(/✓ VAT EUR 19\.00 = 19 % of EUR 100\.00, half up/);
    expect(out).toMatch(/✓ total EUR 119\.00 = EUR 100\.00 \+ EUR 19\.00/);
    expect(out).toMatch(/✓ no VAT: an EU business outside DE with a VAT id, reverse charged/);
    expect(out).toMatch(/✓ total EUR 100\.00 = EUR 100\.00 \+ EUR 0\.00/);
    expect(out).toMatch(/✓ 19 %: EUR 100\.00 taxable, EUR 19\.00 VAT/);
    expect(out).toMatch(/✓ reverse charge: EUR 100\.00 billed without VAT/);
    expect(out).toMatch(/✓ total VAT EUR 19\.00 = the invoices' total_tax/);
    const csv = /✓ task_\w+ {2}TAX_REPORT export: 2 rows written to (\S+\.csv)/.exec(out);
    expect(csv).not.toBeNull();
    expect(fs.readFileSync(csv![1]!, 'utf8').split('\n')[0]).toMatch(/^currency,treatment,tax_rate_id,code,/);
    expect(out).toMatch(/every signature valid/);
    for (const name of ['invoice.create.drafted', 'invoice.update.finalized', 'invoice.update.payment', 'payment.success']) {
      expect(out).toMatch(new RegExp(`^\\s+\\d+ {2}${name.replace(/\./g, '\\.')}$`, 'm'));
    }

    // What the demo printed is what the stack holds: the usage lines paid by the wallets'
    // credits, the platform fee left due, then paid offline for one customer.
    const tenant = stack.api.withKey(key);
    const all = (await tenant.get('/v1/invoices?limit=100')).body.items as Invoice[];
    // Last month's three; this month's upgrade is checked below.
    const invoices = all.filter((i) => i.billing_reason === 'SUBSCRIPTION_CYCLE');
    expect(invoices).toHaveLength(3);
    for (const inv of invoices) {
      const usage = inv.line_items.find((l) => l.price_type === 'USAGE')!;
      const fixed = inv.line_items.find((l) => l.price_type === 'FIXED')!;
      expect(usage.amount).toBeGreaterThan(0);
      expect(usage.prepaid_credits_applied).toBe(usage.amount);
      expect(fixed).toMatchObject({ amount: 4900, prepaid_credits_applied: 0 });
      expect(inv).toMatchObject({ subtotal: usage.amount + 4900, total_prepaid_credits_applied: usage.amount, amount_due: 4900 });
      expect(out).toContain(inv.invoice_number);
    }
    expect(invoices.map((i) => [i.status, i.amount_remaining]).sort()).toEqual([
      ['finalized', 4900],
      ['finalized', 4900],
      ['paid', 0],
    ]);
    const upgrades = all.filter((i) => i.billing_reason === 'SUBSCRIPTION_UPDATE');
    expect(upgrades).toHaveLength(1);
    const [upgrade] = upgrades;
    expect(upgrade.status).toBe('paid');
    expect(upgrade.post_payment_credit_notes_amount).toBeGreaterThan(0);
    expect(upgrade.line_items.find((l) => l.line_type === 'PRORATION_CREDIT')!.amount).toBeLessThan(0);
    // The taxed ones: 19 % VAT at home, none on the reverse-charged EU business.
    const taxed = (all as unknown as Array<{ currency: string; status: string; total: number; total_tax: number; reverse_charge: boolean }>).filter((i) => i.currency === 'eur');
    expect(taxed.map((i) => [i.status, i.total, i.total_tax, i.reverse_charge]).sort()).toEqual([
      ['finalized', 10000, 0, true],
      ['finalized', 11900, 1900, false],
    ]);
  });
});
