import { useEffect, useMemo } from 'react';
import { Entitlements, Invoices, Subscriptions, Usage, Wallets } from './pages';
import type { PortalSession } from './types';
import { portalApi, useRead, useRoute } from './usePortal';

const PAGES = [
  ['invoices', 'Invoices', Invoices],
  ['subscriptions', 'Subscriptions', Subscriptions],
  ['usage', 'Usage', Usage],
  ['wallets', 'Wallets', Wallets],
  ['entitlements', 'Entitlements', Entitlements],
] as const;

/** The seller's accent colour, set through the CSSOM (allowed by the strict policy), when it is a #rrggbb colour. */
function useAccent(colour: string | null | undefined): void {
  useEffect(() => {
    if (colour && /^#[0-9a-f]{6}$/i.test(colour)) document.documentElement.style.setProperty('--accent', colour);
  }, [colour]);
}

/** The customer portal (ADR 0069): the session's customer, its pages, branded by the seller's invoice settings. */
export function Portal({ token }: { token: string | null }) {
  const api = useMemo(() => portalApi(token ?? ''), [token]);
  const session = useRead<PortalSession>(api, '/v1/portal/session');
  const route = useRoute();
  useAccent(session.data?.branding.accent_color);
  const brand = session.data?.branding;
  useEffect(() => {
    if (brand?.company_name) document.title = `${brand.company_name}: billing`;
  }, [brand?.company_name]);
  if (!token || session.status === 401) {
    return (
      <main>
        <h1>This billing link has expired</h1>
        <p>Ask for a new link from the site you came from.</p>
      </main>
    );
  }
  if (session.error) return <main><p role="alert" className="error">{session.error}</p></main>;
  if (!session.data) return <main><p role="status">Loading…</p></main>;
  const current = PAGES.find(([name]) => name === route) ?? PAGES[0];
  const Page = current[2];
  const back = session.data.session.return_url;
  return (
    <>
      <header className="top">
        {brand?.logo_url && /^https:\/\//.test(brand.logo_url) ? <img src={brand.logo_url} alt={brand.company_name ?? 'Seller'} className="logo" /> : null}
        <span className="brand">{brand?.company_name ?? 'Billing'}</span>
        <nav aria-label="Portal pages">
          {PAGES.map(([name, label]) => <a key={name} href={`#/${name}`} aria-current={name === current[0] ? 'page' : undefined}>{label}</a>)}
        </nav>
        <span className="who">{session.data.customer.name ?? session.data.customer.external_id}</span>
        {back ? <a href={back} rel="noreferrer">Back</a> : null}
      </header>
      <main>
        <Page api={api} />
      </main>
    </>
  );
}
