import path from 'node:path';
import type { Express } from 'express';
import { CONSOLE_DIR, mountStaticApp } from '../console';

/** Where the console's build writes the portal (its second Vite config, `vite.portal.config.ts`). */
export const PORTAL_DIR = path.join(CONSOLE_DIR, 'portal');

/** An allowed frame ancestor: an https origin (scheme, host, optional port; no path), or `'self'`. */
export const FRAME_ANCESTOR = /^(https:\/\/[a-z0-9.-]+(:\d{1,5})?|'self')$/i;

/**
 * The portal's policy (ADR 0069): the console's (scripts, styles, data from this origin only, no
 * inline script), images also from https (the seller's logo), and framed only by the ancestors
 * the operator allows (PORTAL_FRAME_ANCESTORS; none by default).
 */
export function portalCsp(frameAncestors: readonly string[]): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data: https:",
    "connect-src 'self'",
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    `frame-ancestors ${frameAncestors.length > 0 ? frameAncestors.join(' ') : "'none'"}`,
  ].join('; ');
}

/** Serves the portal at /portal (no credential: the page reads its token from the URL fragment). */
export function mountPortalPage(app: Express, frameAncestors: readonly string[], dir = PORTAL_DIR): void {
  mountStaticApp(app, { prefix: '/portal', dir, csp: portalCsp(frameAncestors), name: 'customer portal', frameable: frameAncestors.length > 0 });
}
