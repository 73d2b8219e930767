import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Express, NextFunction, Request, Response } from 'express';
import { CONSOLE_DIR, mountStaticApp } from '../console';

/** Where the console's build writes the portal (its second Vite config, `vite.portal.config.ts`). */
export const PORTAL_DIR = path.join(CONSOLE_DIR, 'portal');

/**
 * The portal's policy (ADR 0069): the console's (scripts, styles, data from this origin only, no
 * inline script), images also from https (the seller's logo), and framed only by the ancestors
 * the session's tenant allowed (billing setting `portal.frame_ancestors`; none by default).
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

/** The origins that may frame a session's page: none unless the id is of a live session that has some. */
export type FrameAncestorsOf = (sessionId: string) => Promise<string[]>;

/**
 * Serves the portal (no credential: the page reads its token from the URL fragment). A session's
 * URL, `/portal/s/{id}`, is the same page with `frame-ancestors` from that session's row; any id
 * that is not a live session's gets the same page framed nowhere (never a 404 that would say
 * whether an id exists). `/portal/` is framed nowhere.
 */
export function mountPortalPage(app: Express, frameAncestorsOf: FrameAncestorsOf, dir = PORTAL_DIR): void {
  const index = path.join(dir, 'index.html');
  app.get('/portal/s/:id', async (req: Request, res: Response, next: NextFunction) => {
    // Not built: on to the static app's "not built" answer.
    if (!existsSync(index)) return next();
    try {
      const ancestors = await frameAncestorsOf(String(req.params.id));
      res.setHeader('Content-Security-Policy', portalCsp(ancestors));
      res.setHeader('X-Content-Type-Options', 'nosniff');
      res.setHeader('Referrer-Policy', 'no-referrer');
      if (ancestors.length === 0) res.setHeader('X-Frame-Options', 'DENY');
      // The headers follow the session (a revocation frames it nowhere): never reused from a cache.
      res.setHeader('Cache-Control', 'no-store');
      res.sendFile(index);
    } catch (err) {
      next(err);
    }
  });
  mountStaticApp(app, { prefix: '/portal', dir, csp: portalCsp([]), name: 'customer portal' });
}
