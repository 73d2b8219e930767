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
