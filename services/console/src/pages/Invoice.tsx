import type { Api, Page } from '../api';
import { Loaded, useLoad } from '../data';
import { money, when } from '../format';
import { href } from '../router';
import type { CreditNote, Invoice } from '../types';

/** An invoice: its totals, lines, credit notes, and its PDF and hosted page (signed links, no key needed). */
export function InvoicePage({ api, id }: { api: Api; id: string }) {
  const invoice = useLoad(() => api.get<Invoice>(`/v1/invoices/${encodeURIComponent(id)}`), [id]);
  const notes = useLoad(() => api.get<Page<CreditNote>>('/v1/credit_notes', { invoice_id: id, limit: 100 }), [id]);
  return (
    <section aria-labelledby="invoice-title">
      <Loaded load={invoice}>
        {(i) => (
          <>
            <h1 id="invoice-title">Invoice {i.invoice_number ?? `draft ${i.id}`}</h1>
            <dl className="facts">
              <dt>Customer</dt>
              <dd>
                <a href={href({ page: 'customer', id: i.customer_id })}>{i.customer_id}</a>
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
            <table>
              <caption>Lines</caption>
              <thead>
                <tr>
                  <th scope="col">Description</th>
                  <th scope="col">Type</th>
                  <th scope="col">Quantity</th>
                  <th scope="col">Unit</th>
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
                    <td>{l.quantity}</td>
                    <td>{l.unit_amount}</td>
                    <td>{money(l.amount, i.currency)}</td>
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
              <dt>Prepaid credits</dt>
              <dd>{money(i.total_prepaid_credits_applied > 0 ? -i.total_prepaid_credits_applied : 0, i.currency)}</dd>
              <dt>Total</dt>
              <dd>{money(i.total, i.currency)}</dd>
              <dt>Paid</dt>
              <dd>{money(i.amount_paid, i.currency)}</dd>
              <dt>Remaining</dt>
              <dd>{money(i.amount_remaining, i.currency)}</dd>
            </dl>
          </>
        )}
      </Loaded>
      <h2>Credit notes</h2>
      <Loaded load={notes}>
        {(page) =>
          page.items.length === 0 ? (
            <p>No credit notes.</p>
          ) : (
            <table>
              <thead>
                <tr>
                  <th scope="col">Number</th>
                  <th scope="col">Reason</th>
                  <th scope="col">Status</th>
                  <th scope="col">Amount</th>
                  <th scope="col">Issued</th>
                </tr>
              </thead>
              <tbody>
                {page.items.map((n) => (
                  <tr key={n.id}>
                    <td>{n.credit_note_number}</td>
                    <td>{n.reason}</td>
                    <td>{n.status}</td>
                    <td>{money(n.amount, n.currency)}</td>
                    <td>{when(n.created_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </Loaded>
    </section>
  );
}
