/**
 * The portal token (ADR 0069): it arrives in the URL fragment (`#token=bsp_...`, never sent to a
 * server), is moved to the tab's sessionStorage and taken out of the address at once, so it is
 * in no history entry, bookmark, screenshot or Referer.
 */
const KEY = 'billstream.portal.token';

export function takeToken(location: Location, history: History, storage: Storage): string | null {
  const match = /(?:^#|&)token=(bsp_[A-Za-z0-9_-]+)/.exec(location.hash);
  if (match?.[1]) {
    storage.setItem(KEY, match[1]);
    history.replaceState(null, '', `${location.pathname}#/invoices`);
    return match[1];
  }
  return storage.getItem(KEY);
}

export function forgetToken(storage: Storage): void {
  storage.removeItem(KEY);
}

/**
 * An invoice email's portal link (`#email=...`, ADR 0067): taken out of the address at once, then
 * exchanged for a one-hour session whose token is kept as a fragment's token would be.
 */
export async function takeEmailLink(location: Location, history: History, storage: Storage): Promise<string | null> {
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
