import { useReducer, useState, type FormEvent } from 'react';
import type { Api, Page } from '../api';
import { Loaded, Pager, useLoad } from '../data';
import { when } from '../format';
import { ActionPanel, ActionToggle, Done } from '../forms/action';
import { CreateCustomerForm } from '../forms/lazy';
import { href } from '../router';
import type { Customer } from '../types';

const LIMIT = 25;

/** Customers, a page at a time from the server; found by exact external id or email, or the children of a parent. */
export function CustomersPage({ api }: { api: Api }) {
  const [offset, setOffset] = useState(0);
  const [search, setSearch] = useState<{ field: 'external_id' | 'email' | 'parent_customer_ids'; value: string }>({ field: 'external_id', value: '' });
  const [draft, setDraft] = useState(search);
  const [creating, setCreating] = useState(false);
  const [done, setDone] = useState<Customer | null>(null);
  const [version, reload] = useReducer((v: number) => v + 1, 0);
  const load = useLoad(() => api.get<Page<Customer>>('/v1/customers', { limit: LIMIT, offset, [search.field]: search.value || undefined }), [offset, search.field, search.value, version]);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setOffset(0);
    setSearch({ ...draft, value: draft.value.trim() });
  };
  return (
    <section aria-labelledby="customers-title">
      <h1 id="customers-title">Customers</h1>
      <div className="actions">
        <ActionToggle label="New customer" open={creating} controls="new-customer" onToggle={() => setCreating(!creating)} />
        <Done message={done ? `Customer ${done.external_id} created.` : null} />
        {done && <a href={href({ page: 'customer', id: done.id })}>Open {done.external_id}</a>}
      </div>
      {creating && (
        <ActionPanel id="new-customer">
          <CreateCustomerForm
            api={api}
            onCancel={() => setCreating(false)}
            onDone={(customer) => {
              setCreating(false);
              setDone(customer);
              reload();
            }}
          />
        </ActionPanel>
      )}
      <form className="filters" onSubmit={submit} role="search">
        <label>
          Find by
          <select value={draft.field} onChange={(e) => setDraft({ ...draft, field: e.target.value as typeof draft.field })}>
            <option value="external_id">external id</option>
            <option value="email">email</option>
            <option value="parent_customer_ids">parent customer id</option>
          </select>
        </label>
        <label>
          Value
          <input value={draft.value} onChange={(e) => setDraft({ ...draft, value: e.target.value })} placeholder="acme-42" />
        </label>
        <button type="submit">Search</button>
      </form>
      <Loaded load={load}>
        {(page) => (
          <>
            <table>
              <thead>
                <tr>
                  <th scope="col">External id</th>
                  <th scope="col">Name</th>
                  <th scope="col">Email</th>
                  <th scope="col">Parent</th>
                  <th scope="col">Status</th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                {page.items.map((c) => (
                  <tr key={c.id}>
                    <td>
                      <a href={href({ page: 'customer', id: c.id })}>{c.external_id}</a>
                    </td>
                    <td>{c.name ?? '–'}</td>
                    <td>{c.email ?? '–'}</td>
                    <td>{c.parent_customer_id ? <a href={href({ page: 'customer', id: c.parent_customer_id })}>{c.parent_customer_id}</a> : '–'}</td>
                    <td>{c.status}</td>
                    <td>{when(c.created_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            <Pager {...page.pagination} onOffset={setOffset} />
          </>
        )}
      </Loaded>
    </section>
  );
}
