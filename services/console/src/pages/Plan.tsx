import { useState } from 'react';
import type { Api } from '../api';
import { Loaded, useLoad } from '../data';
import { when } from '../format';
import { TierEditor } from '../pricing/TierEditor';
import type { Plan, Price } from '../pricing/types';
import { href } from '../router';

/** How a price charges, in one line of text. */
function terms(p: Price): string {
  const cur = p.currency.toUpperCase();
  switch (p.billing_model) {
    case 'FLAT_FEE':
      return p.type === 'FIXED' ? `${p.amount ?? '0'} ${cur}` : `${p.amount ?? '0'} ${cur} a unit`;
    case 'PACKAGE':
      return `${p.amount ?? '0'} ${cur} a package of ${p.package?.size ?? '?'} (rounded ${(p.package?.round ?? 'UP').toLowerCase()})`;
    case 'TIERED':
      return `${(p.tier_mode ?? 'VOLUME').toLowerCase()}, ${p.tiers?.length ?? 0} tiers, ${cur}`;
  }
}

/** One plan: its facts, its prices and the price preview of a usage price (the tier editor). */
export function PlanPage({ api, id }: { api: Api; id: string }) {
  const plan = useLoad(() => api.get<Plan>(`/v1/plans/${encodeURIComponent(id)}`), [id]);
  const [editing, setEditing] = useState<string | null>(null);
  return (
    <section aria-labelledby="plan-title">
      <Loaded load={plan}>
        {(p) => {
          const usage = p.prices.filter((x) => x.type === 'USAGE');
          const chosen = usage.find((x) => x.id === editing) ?? usage[0];
          return (
            <>
              <h1 id="plan-title">{p.name}</h1>
              <dl className="facts">
                <dt>Id</dt>
                <dd>{p.id}</dd>
                <dt>Lookup key</dt>
                <dd>{p.lookup_key ?? '–'}</dd>
                <dt>Status</dt>
                <dd>{p.status}</dd>
                <dt>Description</dt>
                <dd>{p.description ?? '–'}</dd>
                <dt>Created</dt>
                <dd>{when(p.created_at)}</dd>
              </dl>
              <h2>Prices</h2>
              {p.prices.length === 0 ? (
                <p>No prices.</p>
              ) : (
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Price</th>
                      <th scope="col">Type</th>
                      <th scope="col">Model</th>
                      <th scope="col">Terms</th>
                      <th scope="col">Period</th>
                      <th scope="col">Invoiced</th>
                      <th scope="col">Meter</th>
                      <th scope="col">Status</th>
                    </tr>
                  </thead>
                  <tbody>
                    {p.prices.map((x) => (
                      <tr key={x.id}>
                        <td>{x.display_name ?? x.id}</td>
                        <td>{x.type}</td>
                        <td>{x.billing_model}</td>
                        <td>{terms(x)}</td>
                        <td>{x.billing_period_count === 1 ? x.billing_period : `${x.billing_period_count} x ${x.billing_period}`}</td>
                        <td>{x.invoice_cadence}</td>
                        <td>{x.meter_id ? <a href={href({ page: 'meter', id: x.meter_id })}>{x.meter_id}</a> : '–'}</td>
                        <td>{x.status}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              )}
              {chosen && (
                <>
                  {usage.length > 1 && (
                    <div className="filters">
                      <label>
                        Price to preview
                        <select value={chosen.id} onChange={(e) => setEditing(e.target.value)}>
                          {usage.map((x) => (
                            <option key={x.id} value={x.id}>
                              {x.display_name ?? x.id}
                            </option>
                          ))}
                        </select>
                      </label>
                    </div>
                  )}
                  <TierEditor key={chosen.id} price={chosen} />
                </>
              )}
            </>
          );
        }}
      </Loaded>
    </section>
  );
}
