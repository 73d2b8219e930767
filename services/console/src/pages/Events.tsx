import { useState, type FormEvent } from 'react';
import type { Api } from '../api';
import { Loaded, Pager, useLoad } from '../data';
import { EventTable } from '../events/EventTable';
import { TAIL_MAX, useTail, type EventsAnswer } from '../events/tail';

const LIMIT = 25;

interface Filter {
  external_customer_id?: string;
  event_name?: string;
  start_time?: string;
  end_time?: string;
}

/** datetime-local (the person's zone) to the API's ISO 8601 with a zone. */
const iso = (local: string) => (local ? new Date(local).toISOString() : undefined);

/** The events explorer: a query (POST /v1/events/query, a page at a time) and a live tail of what arrives. */
export function EventsPage({ api }: { api: Api }) {
  const [form, setForm] = useState({ customer: '', name: '', from: '', to: '' });
  const [filter, setFilter] = useState<Filter>({});
  const [offset, setOffset] = useState(0);
  const [tailing, setTailing] = useState(false);
  const load = useLoad(() => api.post<EventsAnswer>('/v1/events/query', { ...filter, page_size: LIMIT, offset }), [JSON.stringify(filter), offset]);
  const tailFilter = { external_customer_id: filter.external_customer_id, event_name: filter.event_name };
  const tail = useTail(api, tailing, tailFilter);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setOffset(0);
    setFilter({ external_customer_id: form.customer.trim() || undefined, event_name: form.name.trim() || undefined, start_time: iso(form.from), end_time: iso(form.to) });
  };
  return (
    <section aria-labelledby="events-title">
      <h1 id="events-title">Events</h1>
      <form className="filters" onSubmit={submit} aria-label="Query events">
        <label>
          Customer external id
          <input value={form.customer} onChange={(e) => setForm({ ...form, customer: e.target.value })} />
        </label>
        <label>
          Event name
          <input value={form.name} onChange={(e) => setForm({ ...form, name: e.target.value })} />
        </label>
        <label>
          From
          <input type="datetime-local" value={form.from} onChange={(e) => setForm({ ...form, from: e.target.value })} />
        </label>
        <label>
          To
          <input type="datetime-local" value={form.to} onChange={(e) => setForm({ ...form, to: e.target.value })} />
        </label>
        <button type="submit">Query</button>
      </form>
      <section aria-labelledby="tail-title" className="editor">
        <h2 id="tail-title">Live tail</h2>
        <p className="hint">
          The newest events (by customer and name above), polled every 2 seconds while this is on, newest first, the last {TAIL_MAX} kept.
        </p>
        <button type="button" aria-pressed={tailing} onClick={() => setTailing((t) => !t)}>
          {tailing ? 'Stop the tail' : 'Start the tail'}
        </button>
        {tail.error && <p className="error">{tail.error}</p>}
        {tailing && (
          <div aria-live="polite" data-testid="tail">
            <EventTable events={tail.events} caption={`${tail.events.length} newest events`} />
          </div>
        )}
      </section>
      <h2>Query</h2>
      <Loaded load={load}>
        {(answer) => (
          <>
            <EventTable events={answer.events} />
            <Pager total={answer.total_count} limit={LIMIT} offset={offset} onOffset={setOffset} />
          </>
        )}
      </Loaded>
    </section>
  );
}
