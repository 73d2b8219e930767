import type { DocumentSnapshot } from '../documents/store';
import type { Invoice } from '../invoices/domain';
import { emailContent } from './message';
import type { InvoiceEmail } from './store';

const email = { hostedInvoiceUrl: 'https://billing.example.com/v1/hosted/invoices/inv_1?token=1.0.x' } as InvoiceEmail;
const invoice = (currency: string, total: number, amountDue: number) =>
  ({ id: 'inv_1', invoiceNumber: 'INV-202612-7', currency, total, amountDue, dueDate: new Date('2026-12-31T00:00:00Z') }) as Invoice;
const snapshot = (name: string, company: string | null) => ({ buyer: { name }, seller: company ? { company_name: company } : null }) as unknown as DocumentSnapshot;

describe('the invoice email message (ADR 0067)', () => {
  it('names the number and the total in its currency, the amount due, the due date and the hosted link in both bodies', () => {
    const c = emailContent(email, invoice('usd', 123_456, 100_000), snapshot('Jürgen Müller', 'Acme GmbH'));
    expect(c.subject).toBe('Invoice INV-202612-7: 1,234.56 USD from Acme GmbH');
    expect(c.text).toBe(
      'Hello Jürgen Müller,\n\nYour invoice INV-202612-7 of 1,234.56 USD is attached as a PDF.\nAmount due: 1,000.00 USD, due on 2026-12-31.\n\nView and download it online: https://billing.example.com/v1/hosted/invoices/inv_1?token=1.0.x\n\nAcme GmbH\n',
    );
    expect(c.html).toContain('<a href="https://billing.example.com/v1/hosted/invoices/inv_1?token=1.0.x">');
    expect(c.filename).toBe('invoice-INV-202612-7.pdf');
    expect(emailContent(email, invoice('jpy', 1250, 1250), snapshot('A', null)).subject).toBe('Invoice INV-202612-7: 1,250 JPY');
  });

  it('renders every value as text in the HTML body, and leaves the link out when there is none', () => {
    const c = emailContent({ hostedInvoiceUrl: null } as InvoiceEmail, invoice('usd', 100, 100), snapshot('<script>alert(1)</script>', 'Tom & "Jerry"'));
    expect(c.html).not.toContain('<script>');
    expect(c.html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(c.html).toContain('Tom &amp; &quot;Jerry&quot;');
    expect(c.html).not.toContain('<a ');
    expect(c.text).not.toContain('online');
  });

  it('links the portal in both bodies when given its link, escaped in the HTML', () => {
    const portal = 'https://billing.example.com/portal/#email=eyJ0.abc&x';
    const c = emailContent(email, invoice('usd', 100, 100), snapshot('A', null), portal);
    expect(c.text).toContain(`Your invoices, usage and balance (link valid 7 days): ${portal}`);
    expect(c.html).toContain('<a href="https://billing.example.com/portal/#email=eyJ0.abc&amp;x">Your invoices, usage and balance</a>');
    expect(emailContent(email, invoice('usd', 100, 100), snapshot('A', null)).text).not.toContain('/portal/');
  });
});
