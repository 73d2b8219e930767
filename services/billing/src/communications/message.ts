import { escapeHtml as e } from '../documents/html';
import { formatDate, formatMinor } from '../documents/model';
import type { DocumentSnapshot } from '../documents/store';
import type { Invoice } from '../invoices/domain';
import type { InvoiceEmail } from './store';

/** What one invoice email says (ADR 0067): built at each attempt from the row and the invoice as it is. */
export interface EmailContent {
  subject: string;
  text: string;
  html: string;
  filename: string;
}

/**
 * The subject names the invoice's number and total in its currency (`Invoice INV-202612-1: 1,234.56
 * USD`, the seller's name after it when set); both bodies say the total, the amount due and the
 * due date, and link the hosted page when the row has its link and the customer portal (a signed
 * entry the gateway exchanges for a one-hour session, valid 7 days: ADR 0067).
 */
export function emailContent(email: InvoiceEmail, invoice: Invoice, snapshot: DocumentSnapshot | undefined, portalUrl: string | null = null): EmailContent {
  const number = invoice.invoiceNumber ?? invoice.id;
  const total = formatMinor(invoice.total, invoice.currency);
  const due = formatMinor(invoice.amountDue, invoice.currency);
  const seller = snapshot?.seller?.company_name ?? null;
  const buyer = snapshot?.buyer.name ?? null;
  const dueDate = invoice.dueDate ? formatDate(invoice.dueDate.toISOString()) : null;
  const subject = `Invoice ${number}: ${total}${seller ? ` from ${seller}` : ''}`;
  const lines = [
    buyer ? `Hello ${buyer},` : 'Hello,',
    '',
    `Your invoice ${number} of ${total} is attached as a PDF.`,
    `Amount due: ${due}${dueDate ? `, due on ${dueDate}` : ''}.`,
    ...(email.hostedInvoiceUrl ? ['', `View and download it online: ${email.hostedInvoiceUrl}`] : []),
    ...(portalUrl ? ['', `Your invoices, usage and balance (link valid 7 days): ${portalUrl}`] : []),
    '',
    seller ?? '',
  ];
  const link = email.hostedInvoiceUrl ? `<p><a href="${e(email.hostedInvoiceUrl)}">View and download it online</a></p>` : '';
  const html = [
    '<!doctype html><html><body style="font-family:sans-serif;color:#1a1a1a">',
    `<p>${buyer ? `Hello ${e(buyer)},` : 'Hello,'}</p>`,
    `<p>Your invoice <strong>${e(number)}</strong> of <strong>${e(total)}</strong> is attached as a PDF.</p>`,
    `<p>Amount due: ${e(due)}${dueDate ? `, due on ${e(dueDate)}` : ''}.</p>`,
    link,
    portalUrl ? `<p><a href="${e(portalUrl)}">Your invoices, usage and balance</a> (link valid 7 days)</p>` : '',
    seller ? `<p>${e(seller)}</p>` : '',
    '</body></html>',
  ].join('');
  return { subject, text: `${lines.join('\n').trimEnd()}\n`, html, filename: `invoice-${number.replace(/[^A-Za-z0-9_-]/g, '_')}.pdf` };
}
