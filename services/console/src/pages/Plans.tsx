import { useState } from 'react';
import type { Api, Page } from '../api';
import { useLoad } from '../data';
import { ChoiceFilter, PagedTable, plainChoices, type Column } from '../list';
import { when } from '../format';
import type { Plan } from '../pricing/types';
import { href } from '../router';

const LIMIT = 25;
const STATUSES = ['', 'active', 'archived'] as const;

/** Plans, a page at a time from the server, by status. */
export function PlansPage({ api }: { api: Api }) {
  const [offset, setOffset] = useState(0);
  const [status, setStatus] = useState<(typeof STATUSES)[number]>('active');
  const load = useLoad(() => api.get<Page<Plan>>('/v1/plans', { limit: LIMIT, offset, status: status || undefined }), [offset, status]);
  return (
    <section aria-labelledby="plans-title">
      <h1 id="plans-title">Plans</h1>
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
      <PagedTable load={load} columns={COLUMNS} empty="No plans." onOffset={setOffset} />
    </section>
  );
}

const COLUMNS: Column<Plan>[] = [
  { header: 'Plan', cell: (p) => <a href={href({ page: 'plan', id: p.id })}>{p.name}</a> },
  { header: 'Lookup key', cell: (p) => p.lookup_key ?? '–' },
  { header: 'Status', cell: (p) => p.status },
  { header: 'Prices', cell: (p) => p.prices.length },
  { header: 'Created', cell: (p) => when(p.created_at) },
];
