import { useState } from 'react';
import type { Api, Page } from '../api';
import { Loaded, useLoad } from '../data';
import { ChoiceFilter, PagedTable, type Column } from '../list';
import { when } from '../format';
import type { Wallet } from '../types';

interface Transfer {
  id: string;
  type: 'CREDIT' | 'DEBIT';
  transaction_status: string;
  credit_amount: string;
  credit_balance_after: string;
  credits_available: string;
  expiry_date: string | null;
  transaction_reason: string;
  description: string | null;
  created_at: string;
}

interface Entitlement {
  feature_id: string;
  feature_lookup_key: string;
  type: 'BOOLEAN' | 'METERED' | 'STATIC';
  is_enabled: boolean;
  usage_limit: string | null;
  usage: string | null;
  is_soft_limit: boolean;
  static_value: string | null;
  usage_reset_period: string | null;
}

const LIMIT = 20;

/** A wallet's ledger, a page at a time from the server (newest first), one wallet of the customer at a time. */
function Ledger({ api, wallets }: { api: Api; wallets: Wallet[] }) {
  const [walletId, setWalletId] = useState(wallets[0]?.id ?? '');
  const [type, setType] = useState<'' | 'CREDIT' | 'DEBIT'>('');
  const [offset, setOffset] = useState(0);
  const load = useLoad(() => api.get<Page<Transfer>>(`/v1/wallets/${encodeURIComponent(walletId)}/transactions`, { limit: LIMIT, offset, type: type || undefined }), [walletId, type, offset]);
  return (
    <>
      <div className="filters">
        <label>
          Wallet
          <select
            value={walletId}
            onChange={(e) => {
              setOffset(0);
              setWalletId(e.target.value);
            }}
          >
            {wallets.map((w) => (
              <option key={w.id} value={w.id}>{`${w.id} (${w.currency.toUpperCase()})`}</option>
            ))}
          </select>
        </label>
        <ChoiceFilter
          label="Type"
          value={type}
          choices={TYPES}
          onChange={(v) => {
            setOffset(0);
            setType(v);
          }}
        />
      </div>
      <PagedTable load={load} columns={LEDGER_COLUMNS} empty="No transactions." label="Wallet ledger" onOffset={setOffset} />
    </>
  );
}

const TYPES = [
  ['', 'any'],
  ['CREDIT', 'credits'],
  ['DEBIT', 'debits'],
] as const;

const LEDGER_COLUMNS: Column<Transfer>[] = [
  { header: 'When', cell: (t) => when(t.created_at) },
  { header: 'Type', cell: (t) => t.type },
  { header: 'Reason', cell: (t) => t.transaction_reason },
  { header: 'Status', cell: (t) => t.transaction_status },
  { header: 'Credits', cell: (t) => `${t.type === 'DEBIT' ? '−' : '+'}${t.credit_amount}` },
  { header: 'Balance after', cell: (t) => t.credit_balance_after },
  { header: 'Available', cell: (t) => (t.type === 'CREDIT' ? t.credits_available : '–') },
  { header: 'Expires', cell: (t) => when(t.expiry_date) },
  { header: 'Description', cell: (t) => t.description ?? '–' },
];

/** The customer page's wallet ledger and entitlements (issue #33). */
export function CustomerLedger({ api, id }: { api: Api; id: string }) {
  const wallets = useLoad(() => api.get<Page<Wallet>>(`/v1/customers/${encodeURIComponent(id)}/wallets`, { limit: 50 }), [id]);
  const entitlements = useLoad(() => api.get<{ items: Entitlement[] }>(`/v1/customers/${encodeURIComponent(id)}/entitlements?limit=1000`), [id]);
  return (
    <>
      <h2>Wallet ledger</h2>
      <Loaded load={wallets}>{(page) => (page.items.length === 0 ? <p>No wallets.</p> : <Ledger api={api} wallets={page.items} />)}</Loaded>
      <h2>Entitlements</h2>
      <Loaded load={entitlements}>
        {(e) =>
          e.items.length === 0 ? (
            <p>No entitlements.</p>
          ) : (
            <table aria-label="Entitlements">
              <thead>
                <tr>
                  <th scope="col">Feature</th>
                  <th scope="col">Type</th>
                  <th scope="col">Enabled</th>
                  <th scope="col">Usage / limit</th>
                  <th scope="col">Value</th>
                  <th scope="col">Resets</th>
                </tr>
              </thead>
              <tbody>
                {e.items.map((f) => (
                  <tr key={f.feature_id}>
                    <td>{f.feature_lookup_key}</td>
                    <td>{f.type}</td>
                    <td>{f.is_enabled ? 'yes' : 'no'}</td>
                    <td>{f.type === 'METERED' ? `${f.usage ?? '0'} / ${f.usage_limit ?? 'unlimited'}${f.is_soft_limit ? ' (soft)' : ''}` : '–'}</td>
                    <td>{f.static_value ?? '–'}</td>
                    <td>{f.usage_reset_period ?? '–'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </Loaded>
    </>
  );
}
