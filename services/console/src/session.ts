/**
 * The API key lives for the browser tab's session only (ADR 0050): in sessionStorage, so a
 * reload keeps it and closing the tab forgets it; never in localStorage, a cookie or a URL.
 */
const KEY = 'billstream.console.api-key';

export function storedKey(): string | null {
  try {
    return sessionStorage.getItem(KEY);
  } catch {
    return null;
  }
}

export function storeKey(key: string | null): void {
  try {
    if (key) sessionStorage.setItem(KEY, key);
    else sessionStorage.removeItem(KEY);
  } catch {
    /* storage refused (a private mode): the key lives in memory only */
  }
}
