import type { Api, Page } from '../api';
import { Loaded, useLoad } from '../data';
import { quantity, when } from '../format';
import type { Reservation } from '../types';

const LIMIT = 50;

/**
 * The customer's live holds (docs/api/reservations.md: `GET /v1/reservations?customer_id&status=held`,
 * newest first): credits held in its PRE_PAID wallets by work that has not ended yet. Loaded
 * again with the rest of the page (`version`); the wallets table above shows their sum as
 * credits held and what is left as credits available.
 */
export function CustomerHolds({ api, id, version }: { api: Api; id: string; version: number }) {
  const holds = useLoad(() => api.get<Page<Reservation>>('/v1/reservations', { customer_id: id, status: 'held', limit: LIMIT }), [id, version]);
  return (
    <section aria-labelledby="holds-title">
      <h2 id="holds-title">Live holds</h2>
      <Loaded load={holds}>
        {(page) =>
          page.items.length === 0 ? (
            <p>No live holds.</p>
          ) : (
            <>
              {page.pagination.total > page.items.length && <p>{`The newest ${page.items.length} of ${page.pagination.total} live holds.`}</p>}
              <table>
                <thead>
                  <tr>
                    <th scope="col">Reservation</th>
                    <th scope="col">Wallet</th>
                    <th scope="col">Credits held</th>
                    <th scope="col">Expires at</th>
                    <th scope="col">Metadata</th>
                    <th scope="col">Created</th>
                  </tr>
                </thead>
                <tbody>
                  {page.items.map((r) => (
                    <tr key={r.id}>
                      <td>{r.id}</td>
                      <td>{r.wallet_id}</td>
                      <td>{quantity(r.credits_held)}</td>
                      <td title={r.expires_at}>{when(r.expires_at)}</td>
                      <td>
                        {Object.entries(r.metadata).map(([k, v]) => `${k}: ${v}`).join(', ') || '–'}
                      </td>
                      <td>{when(r.created_at)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </>
          )
        }
      </Loaded>
    </section>
  );
}
