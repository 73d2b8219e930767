/**
 * The portal token (ADR 0069): it arrives in the URL fragment (`#token=bsp_...`, never sent to a
 * server), is moved to the tab's sessionStorage and taken out of the address at once, so it is
 * in no history entry, bookmark, screenshot or Referer.
 */
const KEY = 'billstream.portal.token';

/** What the token is kept in: the tab's sessionStorage, or only this page's memory. */
export type TokenStorage = Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>;

/**
 * The tab's sessionStorage, or memory when the browser denies it: inside an iframe of the
 * client's site a browser that blocks third-party storage throws on the very read of
 * `sessionStorage`. Then the token lives only as long as the page (a reload needs the link again).
 */
export function tabStorage(win: { readonly sessionStorage: Storage }): TokenStorage {
  try {
    const storage = win.sessionStorage;
    storage.getItem(KEY);
    return storage;
  } catch {
    const memory = new Map<string, string>();
    return { getItem: (k) => memory.get(k) ?? null, setItem: (k, v) => void memory.set(k, v), removeItem: (k) => void memory.delete(k) };
  }
}

export function takeToken(location: Location, history: History, storage: TokenStorage): string | null {
  const match = /(?:^#|&)token=(bsp_[A-Za-z0-9_-]+)/.exec(location.hash);
  if (match?.[1]) {
    storage.setItem(KEY, match[1]);
    history.replaceState(null, '', `${location.pathname}#/invoices`);
    return match[1];
  }
  return storage.getItem(KEY);
}

export function forgetToken(storage: TokenStorage): void {
  storage.removeItem(KEY);
}

/**
 * An invoice email's portal link (`#email=...`, ADR 0067): taken out of the address at once, then
 * exchanged for a one-hour session whose token is kept as a fragment's token would be.
 */
export async function takeEmailLink(location: Location, history: History, storage: TokenStorage): Promise<string | null> {
  const match = /(?:^#|&)email=([A-Za-z0-9_.-]+)/.exec(location.hash);
  if (!match?.[1]) return takeToken(location, history, storage);
  history.replaceState(null, '', `${location.pathname}#/invoices`);
  try {
    const res = await fetch('/v1/portal/email_sessions', { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify({ link: match[1] }), credentials: 'omit' });
    if (!res.ok) return null;
    const { token } = (await res.json()) as { token: string };
    storage.setItem(KEY, token);
    return token;
  } catch {
    return null;
  }
}
