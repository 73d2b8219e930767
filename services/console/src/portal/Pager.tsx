import { useState } from 'react';
import type { Api } from '../api';
import type { Page } from './types';
import { useRead } from './usePortal';

/** A page of a portal list (limit, offset; `pagination.total`), read and shown with its pager. */
export function usePage<T>(api: Api, path: string, limit: number): { state: { data?: Page<T>; error?: string }; offset: number; setOffset: (n: number) => void } {
  const [offset, setOffset] = useState(0);
  const sep = path.includes('?') ? '&' : '?';
  const state = useRead<Page<T>>(api, `${path}${sep}limit=${limit}&offset=${offset}`);
  return { state, offset, setOffset };
}

/** "Previous" and "Next" over a list's pages, with where this page is: nothing when one page holds all. */
export function Pager({ page, label, onOffset }: { page: Page<unknown>; label: string; onOffset: (n: number) => void }) {
  const p = page.pagination;
  if (!p || p.total <= p.limit) return null;
  const last = Math.min(p.offset + page.items.length, p.total);
  return (
    <nav className="pager" aria-label={`Pages of ${label}`}>
      <button type="button" disabled={p.offset === 0} onClick={() => onOffset(Math.max(0, p.offset - p.limit))}>Previous<span className="sr"> {label}</span></button>
      <span role="status">{p.offset + 1}–{last} of {p.total}</span>
      <button type="button" disabled={last >= p.total} onClick={() => onOffset(p.offset + p.limit)}>Next<span className="sr"> {label}</span></button>
    </nav>
  );
}
