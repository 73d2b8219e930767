import { useState } from 'react';
import type { Api, Page } from '../api';
import { Loaded, Pager, useLoad } from '../data';
import { when } from '../format';
import { href } from '../router';

export interface WebhookEndpoint {
  id: string;
  url: string;
  events: string[];
  enabled: boolean;
  description: string | null;
  created_at: string;
  updated_at: string;
}

const LIMIT = 25;

/** Webhook endpoints, a page at a time from the server, enabled or not. */
export function WebhooksPage({ api }: { api: Api }) {
  const [offset, setOffset] = useState(0);
  const [enabled, setEnabled] = useState<'' | 'true' | 'false'>('');
  const load = useLoad(() => api.get<Page<WebhookEndpoint>>('/v1/webhook-endpoints', { limit: LIMIT, offset, enabled: enabled || undefined }), [offset, enabled]);
  return (
    <section aria-labelledby="webhooks-title">
      <h1 id="webhooks-title">Webhook endpoints</h1>
      <div className="filters">
        <label>
          Enabled
          <select
            value={enabled}
            onChange={(e) => {
              setOffset(0);
              setEnabled(e.target.value as '' | 'true' | 'false');
            }}
          >
            <option value="">any</option>
            <option value="true">enabled</option>
            <option value="false">disabled</option>
          </select>
        </label>
      </div>
      <Loaded load={load}>
        {(page) => (
          <>
            {page.items.length === 0 ? (
              <p>No webhook endpoints.</p>
            ) : (
              <table>
                <thead>
                  <tr>
                    <th scope="col">URL</th>
                    <th scope="col">Events</th>
                    <th scope="col">Enabled</th>
                    <th scope="col">Description</th>
                    <th scope="col">Created</th>
                  </tr>
                </thead>
                <tbody>
                  {page.items.map((w) => (
                    <tr key={w.id}>
                      <td>
                        <a href={href({ page: 'webhook', id: w.id })}>{w.url}</a>
                      </td>
                      <td>{w.events.join(', ')}</td>
                      <td>{w.enabled ? 'yes' : 'no'}</td>
                      <td>{w.description ?? '–'}</td>
                      <td>{when(w.created_at)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
            <Pager {...page.pagination} onOffset={setOffset} />
          </>
        )}
      </Loaded>
    </section>
  );
}
