import { useEffect, useState } from 'react';
import type { Api } from './api';
import { href, type Route } from './router';

/**
 * The names a person looks for where the API answers ids (issue #47 item 6): a customer's name
 * (else its external id) on invoices and credit notes, a plan's name on subscriptions. Each id is
 * read once per signed-in session (GET /v1/customers/{id}, /v1/plans/{id}); one that cannot be
 * read shows as its id.
 */
export type Kind = 'customers' | 'plans';

const cache = new WeakMap<Api, Map<string, Promise<string | null>>>();

function nameOf(api: Api, kind: Kind, id: string): Promise<string | null> {
  let known = cache.get(api);
  if (!known) cache.set(api, (known = new Map()));
  const key = `${kind}/${id}`;
  let found = known.get(key);
  if (!found) {
    found = api
      .get<{ name?: string | null; external_id?: string }>(`/v1/${kind}/${encodeURIComponent(id)}`)
      .then((r) => r.name || r.external_id || null)
      .catch(() => null);
    known.set(key, found);
  }
  return found;
}

/** The names of `ids` as they arrive (an id without one yet is absent). */
export function useNames(api: Api, kind: Kind, ids: string[]): Record<string, string> {
  const [names, setNames] = useState<Record<string, string>>({});
  const wanted = [...new Set(ids)].sort().join('\n');
  useEffect(() => {
    let current = true;
    const list = wanted ? wanted.split('\n') : [];
    void Promise.all(list.map(async (id) => [id, await nameOf(api, kind, id)] as const)).then((pairs) => {
      if (!current) return;
      setNames(Object.fromEntries(pairs.filter((p): p is readonly [string, string] => p[1] !== null)));
    });
    return () => {
      current = false;
    };
  }, [api, kind, wanted]);
  return names;
}

const routeOf = (kind: Kind, id: string): Route => (kind === 'customers' ? { page: 'customer', id } : { page: 'plan', id });

/** A link to a customer or plan by its name (its id until the name is known, and as the link's title). */
export function NameLink({ kind, id, names }: { kind: Kind; id: string; names: Record<string, string> }) {
  return (
    <a className="name" href={href(routeOf(kind, id))} title={id}>
      {names[id] ?? id}
    </a>
  );
}
