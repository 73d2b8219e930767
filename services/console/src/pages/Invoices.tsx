import { useState } from 'react';
import type { Api, Page } from '../api';
import { Loaded, Pager, useLoad } from '../data';
import { ChoiceFilter, plainChoices } from '../list';
import { money, when } from '../format';
import { NameLink, useNames } from '../names';
import { href } from '../router';
import type { Invoice } from '../types';

const LIMIT = 25;
const STATUSES = ['', 'draft', 'finalized', 'paid', 'voided'] as const;

/** Invoices with their customer's name (ids in the API's answer; names read once per session). */
export function InvoiceTable({ api, invoices }: { api: Api; invoices: Invoice[] }) {
  const names = useNames(api, 'customers', invoices.map((i) => i.customer_id));
  if (invoices.length === 0) return <p>No invoices.</p>;
  return (
    <table>
      <thead>
        <tr>
          <th scope="col">Number</th>
          <th scope="col">Customer</th>
          <th scope="col">Reason</th>
          <th scope="col">Status</th>
          <th scope="col">Total</th>
          <th scope="col">Due</th>
          <th scope="col">Created</th>
        </tr>
      </thead>
      <tbody>
        {invoices.map((i) => (
          <tr key={i.id}>
            <td>
              <a href={href({ page: 'invoice', id: i.id })}>{i.invoice_number ?? `draft ${i.id}`}</a>
            </td>
            <td>
              <NameLink kind="customers" id={i.customer_id} names={names} />
            </td>
            <td>{i.billing_reason}</td>
            <td>{i.status}</td>
            <td>{money(i.total, i.currency)}</td>
            <td>{money(i.amount_remaining, i.currency)}</td>
            <td>{when(i.created_at)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Invoices, a page at a time from the server, by status and customer (with its children). */
export function InvoicesPage({ api }: { api: Api }) {
  const [offset, setOffset] = useState(0);
  const [status, setStatus] = useState<(typeof STATUSES)[number]>('');
  const load = useLoad(() => api.get<Page<Invoice>>('/v1/invoices', { limit: LIMIT, offset, status: status || undefined }), [offset, status]);
  return (
    <section aria-labelledby="invoices-title">
      <h1 id="invoices-title">Invoices</h1>
      <div className="filters">
        <ChoiceFilter
          label="Status"
          value={status}
          choices={plainChoices(STATUSES)}
          onChange={(v) => {
            setOffset(0);
            setStatus(v);
          }}
        />
      </div>
      <Loaded load={load}>
        {(page) => (
          <>
            <InvoiceTable api={api} invoices={page.items} />
            <Pager {...page.pagination} onOffset={setOffset} />
          </>
        )}
      </Loaded>
    </section>
  );
}
