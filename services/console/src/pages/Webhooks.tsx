import { useState } from 'react';
import type { Api, Page } from '../api';
import { useLoad } from '../data';
import { ChoiceFilter, PagedTable, type Column } from '../list';
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
        <ChoiceFilter
          label="Enabled"
          value={enabled}
          choices={ENABLED}
          onChange={(v) => {
            setOffset(0);
            setEnabled(v);
          }}
        />
      </div>
      <PagedTable load={load} columns={COLUMNS} empty="No webhook endpoints." onOffset={setOffset} />
    </section>
  );
}

const ENABLED = [
  ['', 'any'],
  ['true', 'enabled'],
  ['false', 'disabled'],
] as const;

const COLUMNS: Column<WebhookEndpoint>[] = [
  { header: 'URL', cell: (w) => <a href={href({ page: 'webhook', id: w.id })}>{w.url}</a> },
  { header: 'Events', cell: (w) => w.events.join(', ') },
  { header: 'Enabled', cell: (w) => (w.enabled ? 'yes' : 'no') },
  { header: 'Description', cell: (w) => w.description ?? '–' },
  { header: 'Created', cell: (w) => when(w.created_at) },
];
