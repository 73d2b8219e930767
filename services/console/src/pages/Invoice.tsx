import { useReducer, useState } from 'react';
import type { Api, Page } from '../api';
import { Loaded, useLoad } from '../data';
import { decimalMoney, money, quantity, when } from '../format';
import { NameLink, useNames } from '../names';
import { ActionPanel, ActionToggle, Done } from '../forms/action';
import { CreditNoteForm, FinalizeInvoiceForm, PaymentForm, VoidInvoiceForm } from '../forms/lazy';
import { ListTable, type Column } from '../list';
import { isTaxed } from '../tax';
import type { CreditNote, Invoice, InvoiceCommunication, Payment } from '../types';
import { LineAmount, LineTax, TaxSummary, TaxTotals } from './InvoiceTax';

type Action = Invoice['available_actions'][number];

const LABELS: Record<Action, string> = { finalize: 'Finalize invoice', pay: 'Record a payment', credit: 'Issue a credit note', void: 'Void invoice' };

/** The actions the invoice takes now: its `available_actions`, as billing decides them (the console decides nothing). */
function actionsOf(i: Invoice): Array<{ action: Action; label: string }> {
  return i.available_actions.map((action) => ({ action, label: LABELS[action] }));
}

/** An invoice: its totals, lines, credit notes, its PDF and hosted page (signed links, no key needed), and its actions. */
export function InvoicePage({ api, id }: { api: Api; id: string }) {
  const [open, setOpen] = useState<Action | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [version, reload] = useReducer((v: number) => v + 1, 0);
  const invoice = useLoad(() => api.get<Invoice>(`/v1/invoices/${encodeURIComponent(id)}`), [id, version]);
  const notes = useLoad(() => api.get<Page<CreditNote>>('/v1/credit_notes', { invoice_id: id, limit: 100 }), [id, version]);
  const payments = useLoad(() => api.get<Page<Payment>>('/v1/payments', { invoice_id: id, limit: 100 }), [id, version]);
  const deliveries = useLoad(() => api.get<{ items: InvoiceCommunication[] }>(`/v1/invoices/${encodeURIComponent(id)}/communications`), [id, version]);
  const names = useNames(api, 'customers', [...(invoice.state === 'done' ? [invoice.data.customer_id] : []), ...(notes.state === 'done' ? notes.data.items.map((n) => n.customer_id) : [])]);
  const succeeded = (message: string) => () => {
    setOpen(null);
    setDone(message);
    reload();
  };
  return (
    <section aria-labelledby="invoice-title">
      <Loaded load={invoice}>
        {(i) => (
          <>
            <h1 id="invoice-title">Invoice {i.invoice_number ?? `draft ${i.id}`}</h1>
            <dl className="facts">
              <dt>Customer</dt>
              <dd>
                <NameLink kind="customers" id={i.customer_id} names={names} />
              </dd>
              <dt>Status</dt>
              <dd>
                {i.status}, payment {i.payment_status}
              </dd>
              <dt>Reason</dt>
              <dd>{i.billing_reason}</dd>
              <dt>Period</dt>
              <dd>
                {when(i.period_start)} – {when(i.period_end)}
              </dd>
              <dt>Documents</dt>
              <dd>
                {i.invoice_pdf_url ? (
                  <>
                    <a href={i.invoice_pdf_url} target="_blank" rel="noopener noreferrer">
                      PDF
                    </a>{' '}
                    ·{' '}
                    <a href={i.hosted_invoice_url ?? undefined} target="_blank" rel="noopener noreferrer">
                      Printable page
                    </a>
                  </>
                ) : (
                  'made at finalization'
                )}
              </dd>
            </dl>
            <div className="actions">
              {actionsOf(i).map(({ action, label }) => (
                <ActionToggle key={action} label={label} open={open === action} controls={`invoice-${action}`} onToggle={() => setOpen(open === action ? null : action)} />
              ))}
            </div>
            {open && (
              <ActionPanel id={`invoice-${open}`}>
                {open === 'finalize' && <FinalizeInvoiceForm api={api} invoice={i} onCancel={() => setOpen(null)} onDone={succeeded('Invoice finalized.')} />}
                {open === 'credit' && <CreditNoteForm api={api} invoice={i} onCancel={() => setOpen(null)} onDone={succeeded('Credit note issued.')} />}
                {open === 'pay' && <PaymentForm api={api} invoice={i} onCancel={() => setOpen(null)} onDone={succeeded('Payment recorded.')} />}
                {open === 'void' && <VoidInvoiceForm api={api} invoice={i} onCancel={() => setOpen(null)} onDone={succeeded('Invoice voided.')} />}
              </ActionPanel>
            )}
            <table>
              <caption>Lines</caption>
              <thead>
                <tr>
                  <th scope="col">Description</th>
                  <th scope="col">Type</th>
                  <th scope="col">Quantity</th>
                  <th scope="col">Unit</th>
                  {isTaxed(i) && <th scope="col">Tax</th>}
                  <th scope="col">Amount</th>
                  <th scope="col">Net</th>
                  <th scope="col">Credits applied</th>
                </tr>
              </thead>
              <tbody>
                {i.line_items.map((l) => (
                  <tr key={l.id}>
                    <td>{l.description}</td>
                    <td>{l.line_type}</td>
                    <td>{quantity(l.quantity)}</td>
                    <td>{decimalMoney(l.unit_amount, i.currency)}</td>
                    {isTaxed(i) && (
                      <td>
                        <LineTax line={l} currency={i.currency} />
                      </td>
                    )}
                    <td>
                      <LineAmount line={l} currency={i.currency} />
                    </td>
                    <td>{money(l.net_amount, i.currency)}</td>
                    <td>{money(l.prepaid_credits_applied, i.currency)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            <dl className="facts totals">
              <dt>Subtotal</dt>
              <dd>{money(i.subtotal, i.currency)}</dd>
              <dt>Discounts</dt>
              <dd>{money(i.total_discount > 0 ? -i.total_discount : 0, i.currency)}</dd>
              <TaxTotals invoice={i} />
              <dt>Prepaid credits</dt>
              <dd>{money(i.total_prepaid_credits_applied > 0 ? -i.total_prepaid_credits_applied : 0, i.currency)}</dd>
              <dt>Total</dt>
              <dd>{money(i.total, i.currency)}</dd>
              <dt>Paid</dt>
              <dd>{money(i.amount_paid, i.currency)}</dd>
              <dt>Remaining</dt>
              <dd>{money(i.amount_remaining, i.currency)}</dd>
            </dl>
            <TaxSummary invoice={i} />
          </>
        )}
      </Loaded>
      <Done message={done} />
      <h2>Payments</h2>
      <Loaded load={payments}>{(page) => <ListTable rows={page.items} columns={PAYMENT_COLUMNS} empty="No payments." label="Payments" />}</Loaded>
      <h2>Credit notes</h2>
      <Loaded load={notes}>{(page) => <ListTable rows={page.items} columns={noteColumns(names)} empty="No credit notes." label="Credit notes" />}</Loaded>
      <h2>Email deliveries</h2>
      <Loaded load={deliveries}>{(list) => <ListTable rows={list.items} columns={DELIVERY_COLUMNS} empty="No email sent: invoice email is off, or nothing triggered one." label="Email deliveries" />}</Loaded>
    </section>
  );
}

const PAYMENT_COLUMNS: Column<Payment>[] = [
  { header: 'When', cell: (p) => when(p.created_at) },
  { header: 'Method', cell: (p) => p.payment_method_type },
  { header: 'Status', cell: (p) => p.payment_status },
  { header: 'Amount', cell: (p) => money(p.amount, p.currency) },
  { header: 'Reference', cell: (p) => p.reference ?? p.provider_reference ?? '–' },
];

/** The invoice's emails (ADR 0067): what triggered each, where it went, how it stands, the SMTP server's last answer. */
const DELIVERY_COLUMNS: Column<InvoiceCommunication>[] = [
  { header: 'Triggered', cell: (c) => when(c.created_at) },
  { header: 'Trigger', cell: (c) => (c.trigger === 'finalization' ? 'finalization' : 'sent on request') },
  { header: 'To', cell: (c) => c.recipient ?? '–' },
  { header: 'Status', cell: (c) => c.status },
  { header: 'Attempts', cell: (c) => String(c.attempts) },
  { header: 'Last answer', cell: (c) => c.last_response ?? '–' },
  { header: 'Sent', cell: (c) => (c.sent_at ? when(c.sent_at) : c.next_attempt_at ? `next try ${when(c.next_attempt_at)}` : '–') },
];

/** A credit note's customer is its invoice's: shown by name. */
const noteColumns = (names: Record<string, string>): Column<CreditNote>[] => [
  { header: 'Number', cell: (n) => n.credit_note_number },
  { header: 'Customer', cell: (n) => <NameLink kind="customers" id={n.customer_id} names={names} /> },
  { header: 'Reason', cell: (n) => n.reason },
  { header: 'Status', cell: (n) => n.status },
  { header: 'Amount', cell: (n) => money(n.amount, n.currency) },
  { header: 'Tax', cell: (n) => money(n.tax_amount, n.currency) },
  { header: 'Total', cell: (n) => money(n.total, n.currency) },
  { header: 'Issued', cell: (n) => when(n.created_at) },
];
