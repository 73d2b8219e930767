import { existsSync } from 'node:fs';
import path from 'node:path';
import express, { type Express, type Request, type Response, type NextFunction } from 'express';

/** Where `npm run build` writes the console (services/console/dist beside this service's dist; the images copy it there too). */
export const CONSOLE_DIR = path.resolve(__dirname, '../../console/dist');

/**
 * The console's strict policy (ADR 0050): scripts and styles from this origin only (no inline
 * script), data only from this origin's API, never framed. Every value from the API is
 * rendered as text by React.
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** The headers of every answer of a static app: its policy, nosniff, no referrer, framing as the policy says. */
function secure(csp: string, frameable: boolean) {
  return (_req: Request, res: Response, next: NextFunction): void => {
    res.setHeader('Content-Security-Policy', csp);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'no-referrer');
    // frame-ancestors decides where framing is allowed; X-Frame-Options only for browsers without it, when none is.
    if (!frameable) res.setHeader('X-Frame-Options', 'DENY');
    next();
  };
}

/**
 * Serves the console at /console (no API key: the page asks the person for one and calls the
 * public API with it). Hashed assets are cached for a year, the page itself is revalidated. A
 * gateway whose console was not built answers 404 with a message saying how to build it.
 */
export function mountConsole(app: Express, dir = CONSOLE_DIR): void {
  mountStaticApp(app, { prefix: '/console', dir, csp: CONSOLE_CSP, name: 'console' });
}

/** A single-page app of static files at `prefix` (the console, the customer portal): `index.html` and hashed `assets/`. */
export function mountStaticApp(app: Express, options: { prefix: string; dir: string; csp: string; name: string; frameable?: boolean }): void {
  const { prefix, dir, name } = options;
  // Routing ignores a trailing slash: only the bare path is redirected (relative asset URLs need the slash).
  app.get(prefix, (req: Request, res: Response, next: NextFunction) => (req.originalUrl.split('?')[0] === prefix ? res.redirect(308, `${prefix}/`) : next()));
  app.use(prefix, secure(options.csp, options.frameable ?? false));
  if (!existsSync(path.join(dir, 'index.html'))) {
    app.use(prefix, (_req: Request, res: Response) => {
      res.status(404).json({ error: { message: `The ${name} is not built in this installation: run \`npm run build\``, internal_error: 'not_found', details: {} } });
    });
    return;
  }
  app.use(`${prefix}/assets`, precompressed(path.join(dir, 'assets')));
  app.use(`${prefix}/assets`, express.static(path.join(dir, 'assets'), { immutable: true, maxAge: '365d', index: false }));
  app.use(`${prefix}/assets`, (_req: Request, res: Response) => {
    res.status(404).json({ error: { message: `No such ${name} asset`, internal_error: 'not_found', details: {} } });
  });
  app.get(`${prefix}/`, (_req: Request, res: Response) => {
    res.setHeader('Cache-Control', 'no-cache');
    res.sendFile(path.join(dir, 'index.html'));
  });
}

const TYPES: Record<string, string> = { '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8' };

/**
 * A script or style sheet as the brotli or gzip copy the build wrote beside it
 * (services/console/scripts/compress.mjs), when the browser accepts one: no compression work
 * per request. Anything else goes on to the plain files.
 */
function precompressed(dir: string) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const name = path.basename(req.path);
    const type = TYPES[path.extname(name)];
    if ((req.method !== 'GET' && req.method !== 'HEAD') || !type || name !== req.path.slice(1)) return next();
    const accepts = String(req.headers['accept-encoding'] ?? '');
    const encoding = /\bbr\b/.test(accepts) ? 'br' : /\bgzip\b/.test(accepts) ? 'gzip' : undefined;
    const file = encoding && path.join(dir, `${name}.${encoding === 'br' ? 'br' : 'gz'}`);
    res.setHeader('Vary', 'Accept-Encoding');
    if (!file || !existsSync(file)) return next();
    res.setHeader('Content-Encoding', encoding);
    res.setHeader('Content-Type', type);
    res.sendFile(file, { immutable: true, maxAge: '365d' }, (err) => err && next(err));
  };
}
