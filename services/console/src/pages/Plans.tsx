import { useState } from 'react';
import type { Api, Page } from '../api';
import { Loaded, Pager, useLoad } from '../data';
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
        <label>
          Status
          <select
            value={status}
            onChange={(e) => {
              setOffset(0);
              setStatus(e.target.value as (typeof STATUSES)[number]);
            }}
          >
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s || 'any'}
              </option>
            ))}
          </select>
        </label>
      </div>
      <Loaded load={load}>
        {(page) => (
          <>
            {page.items.length === 0 ? (
              <p>No plans.</p>
            ) : (
              <table>
                <thead>
                  <tr>
                    <th scope="col">Plan</th>
                    <th scope="col">Lookup key</th>
                    <th scope="col">Status</th>
                    <th scope="col">Prices</th>
                    <th scope="col">Created</th>
                  </tr>
                </thead>
                <tbody>
                  {page.items.map((p) => (
                    <tr key={p.id}>
                      <td>
                        <a href={href({ page: 'plan', id: p.id })}>{p.name}</a>
                      </td>
                      <td>{p.lookup_key ?? '–'}</td>
                      <td>{p.status}</td>
                      <td>{p.prices.length}</td>
                      <td>{when(p.created_at)}</td>
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
