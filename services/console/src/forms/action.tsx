import { Suspense, type ReactNode } from 'react';

/**
 * Where an action's form opens: a button that says what it does (aria-expanded), and the form
 * below it once opened. The forms are a chunk of their own (`./lazy`, with zod and the
 * contracts' schemas), loaded the first time one opens.
 */
export function ActionToggle({ label, open, onToggle, controls }: { label: string; open: boolean; onToggle: () => void; controls: string }) {
  return (
    <button type="button" className="secondary" aria-expanded={open} aria-controls={open ? controls : undefined} onClick={onToggle}>
      {label}
    </button>
  );
}

export function ActionPanel({ id, children }: { id: string; children: ReactNode }) {
  return (
    <div id={id} className="panel">
      <Suspense fallback={<p aria-busy="true">Loading the form…</p>}>{children}</Suspense>
    </div>
  );
}

/** What the last action did, announced politely and kept until the next one. */
export function Done({ message }: { message: string | null }) {
  return (
    <p role="status" className="done">
      {message ?? ''}
    </p>
  );
}
