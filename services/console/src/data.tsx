import { useEffect, useState, type ReactNode } from 'react';
import { ApiError } from './api';

export type Load<T> = { state: 'loading' } | { state: 'error'; error: ApiError } | { state: 'done'; data: T };

/** Loads once per change of `deps`; a later answer never overwrites a newer one. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Load<T> {
  const [result, setResult] = useState<Load<T>>({ state: 'loading' });
  useEffect(() => {
    let current = true;
    setResult({ state: 'loading' });
    load().then(
      (data) => current && setResult({ state: 'done', data }),
      (err: unknown) => current && setResult({ state: 'error', error: err instanceof ApiError ? err : new ApiError(String(err), 0, undefined, {}) }),
    );
    return () => {
      current = false;
    };
  }, deps);
  return result;
}

/** The API's message, as text, with the field it names. */
export function ErrorNote({ error }: { error: ApiError }) {
  return (
    <p role="alert" className="error">
      {error.message}
      {error.field ? ` (field: ${error.field})` : ''}
    </p>
  );
}

export function Loaded<T>({ load, children }: { load: Load<T>; children: (data: T) => ReactNode }) {
  if (load.state === 'loading') return <p aria-busy="true">Loading…</p>;
  if (load.state === 'error') return <ErrorNote error={load.error} />;
  return <>{children(load.data)}</>;
}

/** Server-side paging: the page the list shows, and the buttons to move. */
export function Pager({ total, limit, offset, onOffset }: { total: number; limit: number; offset: number; onOffset: (offset: number) => void }) {
  const last = Math.max(0, Math.ceil(total / limit) - 1);
  const page = Math.floor(offset / limit);
  return (
    <nav className="pager" aria-label="Pages">
      <button type="button" disabled={page === 0} onClick={() => onOffset(Math.max(0, offset - limit))}>
        Previous
      </button>
      <span>
        {total === 0 ? 'None' : `${offset + 1}–${Math.min(total, offset + limit)} of ${total}`}
      </span>
      <button type="button" disabled={page >= last} onClick={() => onOffset(offset + limit)}>
        Next
      </button>
    </nav>
  );
}
