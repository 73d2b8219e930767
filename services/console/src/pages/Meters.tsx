import { useState, type FormEvent } from 'react';
import type { Api, Page } from '../api';
import { UsageChart } from '../charts/UsageChart';
import { Loaded, useLoad } from '../data';
import { PagedTable, type Column } from '../list';
import { when } from '../format';
import { href } from '../router';

interface Meter {
  id: string;
  name: string;
  event_name: string;
  aggregation: { type: string; field: string | null };
  filters: Array<{ key: string; values: string[] }>;
  created_at: string;
}

const LIMIT = 25;
const aggregation = (m: Meter) => (m.aggregation.field ? `${m.aggregation.type} of ${m.aggregation.field}` : m.aggregation.type);

/** Meters, a page at a time from the server. */
export function MetersPage({ api }: { api: Api }) {
  const [offset, setOffset] = useState(0);
  const load = useLoad(() => api.get<Page<Meter>>('/v1/meters', { limit: LIMIT, offset }), [offset]);
  return (
    <section aria-labelledby="meters-title">
      <h1 id="meters-title">Meters</h1>
      <p>
        <a href={href({ page: 'events' })}>Explore the events</a>
      </p>
      <PagedTable load={load} columns={COLUMNS} empty="No meters." onOffset={setOffset} />
    </section>
  );
}

const COLUMNS: Column<Meter>[] = [
  { header: 'Meter', cell: (m) => <a href={href({ page: 'meter', id: m.id })}>{m.name}</a> },
  { header: 'Event name', cell: (m) => m.event_name },
  { header: 'Aggregation', cell: (m) => aggregation(m) },
  { header: 'Created', cell: (m) => when(m.created_at) },
];

/** One meter: what it counts, and a customer's usage through it per day. */
export function MeterPage({ api, id }: { api: Api; id: string }) {
  const meter = useLoad(() => api.get<Meter>(`/v1/meters/${encodeURIComponent(id)}`), [id]);
  const [customer, setCustomer] = useState('');
  const [shown, setShown] = useState<string | null>(null);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setShown(customer.trim() || null);
  };
  return (
    <section aria-labelledby="meter-title">
      <Loaded load={meter}>
        {(m) => (
          <>
            <h1 id="meter-title">{m.name}</h1>
            <dl className="facts">
              <dt>Id</dt>
              <dd>{m.id}</dd>
              <dt>Event name</dt>
              <dd>{m.event_name}</dd>
              <dt>Aggregation</dt>
              <dd>{aggregation(m)}</dd>
              <dt>Filters</dt>
              <dd>{m.filters.length === 0 ? '–' : m.filters.map((f) => `${f.key} in ${f.values.join(', ')}`).join('; ')}</dd>
              <dt>Created</dt>
              <dd>{when(m.created_at)}</dd>
            </dl>
            <form className="filters" onSubmit={submit} aria-label="A customer's usage">
              <label>
                Customer external id
                <input value={customer} onChange={(e) => setCustomer(e.target.value)} />
              </label>
              <button type="submit">Show usage</button>
            </form>
            {shown && <UsageChart api={api} externalCustomerId={shown} meters={[{ id: m.id, name: m.name }]} />}
          </>
        )}
      </Loaded>
    </section>
  );
}
