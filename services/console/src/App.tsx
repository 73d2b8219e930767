import { useMemo, useState, type FormEvent } from 'react';
import { ApiError, createApi, type Api } from './api';
import { ErrorNote } from './data';
import { CustomerPage } from './pages/Customer';
import { CustomersPage } from './pages/Customers';
import { InvoicePage } from './pages/Invoice';
import { InvoicesPage } from './pages/Invoices';
import { SectionPage } from './pages/sections';
import { inSections, SectionLinks } from './nav';
import { href, useRoute, type Route } from './router';
import { storedKey, storeKey } from './session';

/** Asks for an API key and checks it with one small read before the console uses it. */
function KeyGate({ onKey }: { onKey: (key: string) => void }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await createApi(key.trim()).get('/v1/customers', { limit: 1 });
      onKey(key.trim());
    } catch (err) {
      setError(err instanceof ApiError ? err : new ApiError(String(err), 0, undefined, {}));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main className="gate">
      <h1>Billstream console</h1>
      <form onSubmit={submit}>
        <label htmlFor="api-key">API key</label>
        <input id="api-key" type="password" autoComplete="off" value={key} onChange={(e) => setKey(e.target.value)} required />
        <p className="hint">Kept in this tab only, until you close it or sign out. `npm start` printed the key of the embedded default.</p>
        {error && <ErrorNote error={error} />}
        <button type="submit" disabled={busy || key.trim() === ''}>
          {busy ? 'Checking…' : 'Open the console'}
        </button>
      </form>
    </main>
  );
}

function Page({ api, route }: { api: Api; route: Route }) {
  switch (route.page) {
    case 'customers':
      return <CustomersPage api={api} />;
    case 'customer':
      return <CustomerPage key={route.id} api={api} id={route.id} />;
    case 'invoices':
      return <InvoicesPage api={api} />;
    case 'invoice':
      return <InvoicePage key={route.id} api={api} id={route.id} />;
    default:
      return <SectionPage api={api} route={route} />;
  }
}

export function App() {
  const [key, setKey] = useState<string | null>(() => storedKey());
  const route = useRoute();
  const api = useMemo(() => (key ? createApi(key) : null), [key]);
  if (!api) {
    return (
      <KeyGate
        onKey={(k) => {
          storeKey(k);
          setKey(k);
        }}
      />
    );
  }
  const current = inSections(route) ? 'other' : route.page === 'invoice' || route.page === 'invoices' ? 'invoices' : 'customers';
  return (
    <>
      <header className="top">
        <span className="brand">Billstream</span>
        <nav aria-label="Sections">
          <a href={href({ page: 'customers' })} aria-current={current === 'customers' ? 'page' : undefined}>
            Customers
          </a>
          <a href={href({ page: 'invoices' })} aria-current={current === 'invoices' ? 'page' : undefined}>
            Invoices
          </a>
          <SectionLinks route={route} />
        </nav>
        <button
          type="button"
          onClick={() => {
            storeKey(null);
            setKey(null);
          }}
        >
          Sign out
        </button>
      </header>
      <main>
        <Page api={api} route={route} />
      </main>
    </>
  );
}
