import { useState } from 'react';
import type { Api } from '../api';
import { decimalMoney, money, quantity, when } from '../format';
import { Pager, usePage } from './Pager';
import type { PortalCreditNote, PortalEntitlement, PortalHold, PortalInvoice, PortalSubscription, PortalTransaction, PortalUsage, PortalWallet } from './types';
import { useRead } from './usePortal';
import { barsOf, UsageBars } from './UsageBars';

/** Loading, an error, or the page: every value rendered as text by React. */
function Loaded<T>({ state, children }: { state: { data?: T; error?: string }; children: (data: T) => React.ReactNode }) {
  if (state.error) return <p role="alert" className="error">{state.error}</p>;
  if (state.data === undefined) return <p role="status">Loading…</p>;
  return <>{children(state.data)}</>;
}

/** Records per page of every portal list. */
const LIMIT = 50;

/** A wallet as its customer knows it: its description, else its currency's. */
const walletName = (w: PortalWallet) => w.description ?? `${w.currency.toUpperCase()} credits`;
const date = (iso: string | null | undefined) => (iso ? when(iso) : '—');
/** Only https (or this origin's) links are made into anchors: a link of another scheme is shown as text. */
const safeHref = (url: string | null) => (url && /^(https:\/\/|\/|http:\/\/(127\.0\.0\.1|localhost)[:/])/.test(url) ? url : undefined);

export function Invoices({ api }: { api: Api }) {
  const { state, setOffset } = usePage<PortalInvoice>(api, '/v1/portal/invoices', LIMIT);
  const { state: credits, setOffset: setCreditsOffset } = usePage<PortalCreditNote>(api, '/v1/portal/credit_notes', LIMIT);
  return (
    <>
      <h1>Invoices</h1>
      <Loaded state={state}>
        {(page) =>
          page.items.length === 0 ? <p>No invoices yet.</p> : (
            <>
            <table>
              <caption>Your invoices</caption>
              <thead><tr><th scope="col">Number</th><th scope="col">Period</th><th scope="col">Status</th><th scope="col">Total</th><th scope="col">Due</th><th scope="col">Due date</th><th scope="col">Documents</th></tr></thead>
              <tbody>
                {page.items.map((i) => (
                  <tr key={i.id}>
                    <td>{i.invoice_number ?? i.id}</td>
                    <td>{date(i.period_start)} – {date(i.period_end)}</td>
                    <td>{i.status}</td>
                    <td>{money(i.total, i.currency)}</td>
                    <td>{money(i.amount_due, i.currency)}</td>
                    <td>{date(i.due_date)}</td>
                    <td>
                      {safeHref(i.hosted_invoice_url) && <a href={safeHref(i.hosted_invoice_url)} rel="noreferrer noopener" target="_blank">View<span className="sr"> invoice {i.invoice_number ?? i.id}</span></a>}{' '}
                      {safeHref(i.invoice_pdf_url) && <a href={safeHref(i.invoice_pdf_url)} rel="noreferrer noopener" target="_blank">PDF<span className="sr"> of invoice {i.invoice_number ?? i.id}</span></a>}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
            <Pager page={page} label="invoices" onOffset={setOffset} />
            </>
          )
        }
      </Loaded>
      <h2>Credit notes</h2>
      <Loaded state={credits}>
        {(page) =>
          page.items.length === 0 ? <p>No credit notes.</p> : (
            <>
            <table>
              <caption>Your credit notes</caption>
              <thead><tr><th scope="col">Number</th><th scope="col">Invoice</th><th scope="col">Status</th><th scope="col">Total</th><th scope="col">Issued</th></tr></thead>
              <tbody>{page.items.map((c) => <tr key={c.id}><td>{c.credit_note_number ?? c.id}</td><td>{c.invoice_id}</td><td>{c.status}</td><td>{c.total === undefined ? '—' : money(c.total, c.currency)}</td><td>{date(c.created_at)}</td></tr>)}</tbody>
            </table>
            <Pager page={page} label="credit notes" onOffset={setCreditsOffset} />
            </>
          )
        }
      </Loaded>
    </>
  );
}

export function Subscriptions({ api }: { api: Api }) {
  const { state, setOffset } = usePage<PortalSubscription>(api, '/v1/portal/subscriptions', LIMIT);
  return (
    <>
      <h1>Subscriptions</h1>
      <Loaded state={state}>
        {(page) =>
          page.items.length === 0 ? <p>No subscriptions.</p> : (
            <>
            <table>
              <caption>Your subscriptions and their next invoice</caption>
              <thead><tr><th scope="col">Plan</th><th scope="col">Status</th><th scope="col">Current period</th><th scope="col">Upcoming invoice</th></tr></thead>
              <tbody>
                {page.items.map((s) => (
                  <tr key={s.id}>
                    <td>{s.plan_name ?? s.id}</td>
                    <td>{s.status}</td>
                    <td>{date(s.current_period_start)} – {date(s.current_period_end)}</td>
                    <td>{s.upcoming_invoice ? money(s.upcoming_invoice.total, s.upcoming_invoice.currency) : '—'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            <Pager page={page} label="subscriptions" onOffset={setOffset} />
            </>
          )
        }
      </Loaded>
    </>
  );
}

export function Usage({ api }: { api: Api }) {
  const state = useRead<PortalUsage>(api, '/v1/portal/usage');
  return (
    <>
      <h1>Usage</h1>
      <Loaded state={state}>
        {(usage) => {
          const bars = barsOf(usage.subscriptions.flatMap((s) => s.items));
          return (
            <>
              <p>As of {when(usage.as_of)}. So far this period: {usage.totals.length === 0 ? 'nothing' : usage.totals.map((t) => money(t.amount, t.currency)).join(', ')}.</p>
              {bars.length === 0 ? <p>No metered usage this period.</p> : <UsageBars bars={bars} />}
            </>
          );
        }}
      </Loaded>
    </>
  );
}

function Ledger({ api, wallet }: { api: Api; wallet: PortalWallet }) {
  const { state, setOffset } = usePage<PortalTransaction>(api, `/v1/portal/wallets/${encodeURIComponent(wallet.id)}/transactions`, LIMIT);
  return (
    <Loaded state={state}>
      {(page) => (
        <>
        <table>
          <caption>Ledger of {walletName(wallet)}</caption>
          <thead><tr><th scope="col">When</th><th scope="col">Type</th><th scope="col">Reason</th><th scope="col">Credits</th><th scope="col">Balance after</th></tr></thead>
          <tbody>{page.items.map((t) => <tr key={t.id}><td>{date(t.created_at)}</td><td>{t.type}</td><td>{t.transaction_reason ?? '—'}</td><td>{quantity(t.credit_amount ?? null)}</td><td>{quantity(t.credit_balance_after ?? null)}</td></tr>)}</tbody>
        </table>
        <Pager page={page} label={`ledger of ${walletName(wallet)}`} onOffset={setOffset} />
        </>
      )}
    </Loaded>
  );
}

/** The live holds: credits reserved on the wallets and not yet committed or released (ADR 0068). */
function Holds({ api, wallets }: { api: Api; wallets: PortalWallet[] }) {
  const { state, setOffset } = usePage<PortalHold>(api, '/v1/portal/holds', LIMIT);
  const name = (id: string) => {
    const w = wallets.find((x) => x.id === id);
    return w ? walletName(w) : id;
  };
  return (
    <>
      <h2>Holds</h2>
      <Loaded state={state}>
        {(page) =>
          page.items.length === 0 ? <p>No credits on hold.</p> : (
            <>
              <table>
                <caption>Credits on hold</caption>
                <thead><tr><th scope="col">Wallet</th><th scope="col">Credits held</th><th scope="col">Since</th><th scope="col">Expires</th></tr></thead>
                <tbody>{page.items.map((h) => <tr key={h.id}><td>{name(h.wallet_id)}</td><td data-testid="hold-credits">{quantity(h.credits_held)}</td><td>{date(h.created_at)}</td><td>{date(h.expires_at)}</td></tr>)}</tbody>
              </table>
              <Pager page={page} label="holds" onOffset={setOffset} />
            </>
          )
        }
      </Loaded>
    </>
  );
}

export function Wallets({ api }: { api: Api }) {
  const { state, setOffset } = usePage<PortalWallet>(api, '/v1/portal/wallets', LIMIT);
  const [open, setOpen] = useState<string | null>(null);
  return (
    <>
      <h1>Wallets</h1>
      <Loaded state={state}>
        {(page) =>
          page.items.length === 0 ? <p>No wallets.</p> : (
            <>
              <table>
                <caption>Your wallets</caption>
                <thead><tr><th scope="col">Wallet</th><th scope="col">Status</th><th scope="col">Balance</th><th scope="col">Real-time balance</th><th scope="col">Ledger</th></tr></thead>
                <tbody>
                  {page.items.map((w) => (
                    <tr key={w.id}>
                      <td>{walletName(w)}</td>
                      <td>{w.wallet_status}</td>
                      <td>{w.balance ? decimalMoney(w.balance.balance, w.currency) : '—'}</td>
                      <td data-testid="real-time-balance">{w.balance?.real_time_balance ? decimalMoney(w.balance.real_time_balance, w.currency) : '—'}</td>
                      <td><button type="button" aria-expanded={open === w.id} onClick={() => setOpen(open === w.id ? null : w.id)}>{open === w.id ? 'Hide' : 'Show'} ledger<span className="sr"> of {walletName(w)}</span></button></td>
                    </tr>
                  ))}
                </tbody>
              </table>
              <Pager page={page} label="wallets" onOffset={setOffset} />
              {page.items.filter((w) => w.id === open).map((w) => <Ledger key={w.id} api={api} wallet={w} />)}
              <Holds api={api} wallets={page.items} />
            </>
          )
        }
      </Loaded>
    </>
  );
}

export function Entitlements({ api }: { api: Api }) {
  const { state, setOffset } = usePage<PortalEntitlement>(api, '/v1/portal/entitlements', LIMIT);
  return (
    <>
      <h1>Entitlements</h1>
      <Loaded state={state}>
        {(page) =>
          page.items.length === 0 ? <p>No entitlements.</p> : (
            <>
            <table>
              <caption>What your plans include</caption>
              <thead><tr><th scope="col">Feature</th><th scope="col">Enabled</th><th scope="col">Limit</th><th scope="col">Used</th><th scope="col">Remaining</th></tr></thead>
              <tbody>{page.items.map((e) => <tr key={`${e.customer_id}-${e.feature_lookup_key}`}><td>{e.feature_lookup_key}</td><td>{e.is_enabled ? 'yes' : 'no'}</td><td>{e.usage_limit === null ? (e.static_value ?? '—') : quantity(e.usage_limit)}</td><td>{quantity(e.usage)}</td><td>{e.remaining === null ? '—' : quantity(e.remaining)}</td></tr>)}</tbody>
            </table>
            <Pager page={page} label="entitlements" onOffset={setOffset} />
            </>
          )
        }
      </Loaded>
    </>
  );
}
