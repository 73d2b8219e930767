import { useState, type FormEvent } from 'react';
import { ApiError, type Api, type Page } from '../api';
import { ErrorNote, Loaded, Pager, useLoad } from '../data';
import { when } from '../format';

interface ApiKey {
  id: string;
  name: string;
  permissions: string[];
  environment_id: string;
  key_prefix: string;
  created_at: string;
  revoked_at: string | null;
}

const LIMIT = 25;
const asError = (err: unknown) => (err instanceof ApiError ? err : new ApiError(String(err), 0, undefined, {}));

/**
 * API keys of this environment, a page at a time; a new key's secret is shown once, in this
 * page's memory only (never stored, never logged); a revoke asks to confirm and answers 401 from then on.
 */
export function ApiKeysPage({ api }: { api: Api }) {
  const [offset, setOffset] = useState(0);
  const [version, setVersion] = useState(0);
  const load = useLoad(() => api.get<Page<ApiKey>>('/v1/api-keys', { limit: LIMIT, offset }), [offset, version]);
  const [created, setCreated] = useState<{ name: string; key: string } | null>(null);
  const [confirming, setConfirming] = useState<ApiKey | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const revoke = async (k: ApiKey) => {
    setError(null);
    try {
      await api.delete(`/v1/api-keys/${encodeURIComponent(k.id)}`);
      setConfirming(null);
      setVersion((v) => v + 1);
    } catch (err) {
      setError(asError(err));
    }
  };
  return (
    <section aria-labelledby="keys-title">
      <h1 id="keys-title">API keys</h1>
      <CreateKey
        api={api}
        onCreated={(k) => {
          setCreated(k);
          setVersion((v) => v + 1);
        }}
      />
      {created && <NewSecret created={created} onDone={() => setCreated(null)} />}
      {confirming && (
        <div role="alertdialog" aria-labelledby="revoke-title" className="confirm">
          <h2 id="revoke-title">Revoke the key “{confirming.name}”?</h2>
          <p>Requests with it get 401 from now on. This cannot be undone.</p>
          <button type="button" onClick={() => void revoke(confirming)}>
            Revoke {confirming.name}
          </button>{' '}
          <button type="button" className="secondary" onClick={() => setConfirming(null)}>
            Cancel
          </button>
        </div>
      )}
      {error && <ErrorNote error={error} />}
      <Loaded load={load}>
        {(page) => (
          <>
            <table>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Prefix</th>
                  <th scope="col">Permissions</th>
                  <th scope="col">Environment</th>
                  <th scope="col">Created</th>
                  <th scope="col">Revoked</th>
                  <th scope="col">
                    <span className="visually-hidden">Action</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {page.items.map((k) => (
                  <tr key={k.id}>
                    <td>{k.name}</td>
                    <td>{k.key_prefix}…</td>
                    <td>{k.permissions.join(', ')}</td>
                    <td>{k.environment_id}</td>
                    <td>{when(k.created_at)}</td>
                    <td>{when(k.revoked_at)}</td>
                    <td>
                      {!k.revoked_at && (
                        <button type="button" onClick={() => setConfirming(k)}>
                          Revoke {k.name}
                        </button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
            <Pager {...page.pagination} onOffset={setOffset} />
          </>
        )}
      </Loaded>
    </section>
  );
}

function CreateKey({ api, onCreated }: { api: Api; onCreated: (k: { name: string; key: string }) => void }) {
  const [name, setName] = useState('');
  const [access, setAccess] = useState<'all' | 'read'>('all');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    const permissions = access === 'all' ? ['*'] : ['customers:read', 'wallets:read', 'events:read', 'meters:read', 'plans:read', 'subscriptions:read', 'invoices:read', 'webhooks:read'];
    try {
      const made = await api.post<{ name: string; key: string }>('/v1/api-keys', { name: name.trim(), permissions });
      setName('');
      onCreated({ name: made.name, key: made.key });
    } catch (err) {
      setError(asError(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form className="filters" onSubmit={submit} aria-label="Create an API key">
      <label>
        Name
        <input value={name} onChange={(e) => setName(e.target.value)} required maxLength={200} />
      </label>
      <label>
        Access
        <select value={access} onChange={(e) => setAccess(e.target.value as 'all' | 'read')}>
          <option value="all">everything (*)</option>
          <option value="read">read only</option>
        </select>
      </label>
      <button type="submit" disabled={busy || name.trim() === ''}>
        Create key
      </button>
      {error && <ErrorNote error={error} />}
    </form>
  );
}

/** The secret, once: selectable text and a copy button; "Done" forgets it. */
function NewSecret({ created, onDone }: { created: { name: string; key: string }; onDone: () => void }) {
  const [copied, setCopied] = useState<string | null>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(created.key);
      setCopied('Copied.');
    } catch {
      setCopied('The browser refused the clipboard: select the key and copy it.');
    }
  };
  return (
    <div className="secret" role="status" aria-labelledby="secret-title">
      <h2 id="secret-title">The key “{created.name}”</h2>
      <p>Copy it now: it is shown this once and is not kept anywhere.</p>
      <code data-testid="new-key">{created.key}</code>{' '}
      <button type="button" onClick={() => void copy()}>
        Copy
      </button>{' '}
      <button type="button" className="secondary" onClick={onDone}>
        Done
      </button>
      {copied && <p className="hint">{copied}</p>}
    </div>
  );
}
