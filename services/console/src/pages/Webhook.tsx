import { useState } from 'react';
import { ApiError, type Api } from '../api';
import { ErrorNote, Loaded, Pager, useLoad } from '../data';
import { when } from '../format';
import type { WebhookEndpoint } from './Webhooks';

interface Delivery {
  id: string;
  event_id: string;
  event_name: string;
  attempt: number;
  status: 'succeeded' | 'failed';
  response_code: number | null;
  error: string | null;
  duration_ms: number;
  attempted_at: string;
  retry_at: string | null;
}

interface Deliveries {
  deliveries: Delivery[];
  pagination: { total: number; limit: number; offset: number };
}

const LIMIT = 25;

function AttemptRows({ rows, onAttempts, onResend, busy }: { rows: Delivery[]; onAttempts?: (eventId: string) => void; onResend: (d: Delivery) => void; busy: boolean }) {
  if (rows.length === 0) return <p>No deliveries.</p>;
  return (
    <table>
      <thead>
        <tr>
          <th scope="col">Event</th>
          <th scope="col">Event id</th>
          <th scope="col">Attempt</th>
          <th scope="col">Status</th>
          <th scope="col">Answer</th>
          <th scope="col">Attempted</th>
          <th scope="col">Next retry</th>
          <th scope="col">
            <span className="visually-hidden">Actions</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {rows.map((d) => (
          <tr key={d.id}>
            <td>{d.event_name}</td>
            <td>{d.event_id}</td>
            <td>{d.attempt}</td>
            <td>{d.status}</td>
            <td>
              {d.response_code ?? '–'} {d.error ? `(${d.error})` : ''} {`${d.duration_ms} ms`}
            </td>
            <td>{when(d.attempted_at)}</td>
            <td>{when(d.retry_at)}</td>
            <td className="cell-actions">
              {onAttempts && (
                <button type="button" className="secondary" onClick={() => onAttempts(d.event_id)} aria-label={`Attempts of ${d.event_id}`}>
                  Attempts
                </button>
              )}
              <button type="button" disabled={busy} onClick={() => onResend(d)} aria-label={`Resend ${d.event_id} (attempt ${d.attempt})`}>
                Resend
              </button>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** One endpoint: its facts, its deliveries (server-paged, newest first), an event's attempts, and a resend. */
export function WebhookPage({ api, id }: { api: Api; id: string }) {
  const path = `/v1/webhook-endpoints/${encodeURIComponent(id)}`;
  const [offset, setOffset] = useState(0);
  const [status, setStatus] = useState<'' | 'succeeded' | 'failed'>('');
  const [eventId, setEventId] = useState<string | null>(null);
  const [version, setVersion] = useState(0);
  const [busy, setBusy] = useState(false);
  const [note, setNote] = useState<string | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const endpoint = useLoad(() => api.get<WebhookEndpoint>(path), [id]);
  const deliveries = useLoad(() => api.get<Deliveries>(`${path}/deliveries`, { limit: LIMIT, offset, status: status || undefined }), [id, offset, status, version]);
  const attempts = useLoad(() => (eventId ? api.get<Deliveries>(`${path}/deliveries`, { event_id: eventId, limit: 100 }) : Promise.resolve(null)), [id, eventId, version]);
  const resend = async (d: Delivery) => {
    setBusy(true);
    setError(null);
    setNote(null);
    try {
      const made = await api.post<Delivery>(`${path}/deliveries/${encodeURIComponent(d.id)}/resend`, {});
      setNote(`Resent ${made.event_id}: attempt ${made.attempt} ${made.status}${made.response_code ? ` (HTTP ${made.response_code})` : ''}.`);
      setEventId(made.event_id);
      setVersion((v) => v + 1);
    } catch (err) {
      setError(err instanceof ApiError ? err : new ApiError(String(err), 0, undefined, {}));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="webhook-title">
      <Loaded load={endpoint}>
        {(w) => (
          <>
            <h1 id="webhook-title">Webhook endpoint {w.url}</h1>
            <dl className="facts">
              <dt>Id</dt>
              <dd>{w.id}</dd>
              <dt>Events</dt>
              <dd>{w.events.join(', ')}</dd>
              <dt>Enabled</dt>
              <dd>{w.enabled ? 'yes' : 'no'}</dd>
              <dt>Description</dt>
              <dd>{w.description ?? '–'}</dd>
              <dt>Updated</dt>
              <dd>{when(w.updated_at)}</dd>
            </dl>
          </>
        )}
      </Loaded>
      <p role="status">{note}</p>
      {error && <ErrorNote error={error} />}
      {eventId && (
        <section aria-labelledby="attempts-title" className="editor">
          <h2 id="attempts-title">Attempts of {eventId}</h2>
          <Loaded load={attempts}>{(page) => page && <AttemptRows rows={page.deliveries} onResend={(d) => void resend(d)} busy={busy} />}</Loaded>
          <button type="button" className="secondary" onClick={() => setEventId(null)}>
            Close the attempts
          </button>
        </section>
      )}
      <h2>Deliveries</h2>
      <div className="filters">
        <label>
          Status
          <select
            value={status}
            onChange={(e) => {
              setOffset(0);
              setStatus(e.target.value as '' | 'succeeded' | 'failed');
            }}
          >
            <option value="">any</option>
            <option value="succeeded">succeeded</option>
            <option value="failed">failed</option>
          </select>
        </label>
      </div>
      <Loaded load={deliveries}>
        {(page) => (
          <>
            <AttemptRows rows={page.deliveries} onAttempts={setEventId} onResend={(d) => void resend(d)} busy={busy} />
            <Pager {...page.pagination} onOffset={setOffset} />
          </>
        )}
      </Loaded>
    </section>
  );
}
