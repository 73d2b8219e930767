import { timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import { ALL_ROUTES } from '@billstream/contracts';
import { NotFoundError, PayloadTooLargeError, UnauthenticatedError, ValidationError } from '@billstream/errors';
import { newUlid } from '@billstream/ids';
import type { Logger } from '@billstream/logger';
import { INTERNAL_HEADERS, loggerOf, type RequestContext } from './context';
import { errorResponse } from './errors';
import { assertStorableJson, mayHoldUnstorableText } from './json-guard';
import { assertDecodablePath } from './path-guard';
import { observeRequests, type RouteResolver } from './observe';
import { parseQueryString } from './query';

export const MiB = 1024 * 1024;

export interface HttpAppOptions {
  logger: Logger;
  /** The service this app belongs to: the `service` label of its HTTP metrics and its spans' name. */
  service: string;
  /** Route templates of requests answered before a route matched (the gateway's 401 and 429). */
  resolveRoute?: RouteResolver;
  /** JSON body limit per path prefix; the default is 1 MiB. */
  bodyLimits?: Array<{ pathPrefix: string; bytes: number }>;
}

const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

function isIngestionPath(path: string): boolean {
  return path === '/v1/events' || path.startsWith('/v1/events/');
}

/** Set by the JSON parser when the raw body may decode to a NUL or a lone surrogate. */
const MAY_HOLD_UNSTORABLE = Symbol('billstream.mayHoldUnstorable');

type ParsedRequest = Request & { [MAY_HOLD_UNSTORABLE]?: boolean };

function jsonParser(limit: number) {
  return express.json({
    limit,
    strict: false,
    verify: (req, _res, buf, encoding) => {
      (req as ParsedRequest)[MAY_HOLD_UNSTORABLE] = encoding.toLowerCase() !== 'utf-8' || mayHoldUnstorableText(buf);
    },
  });
}

/** Sends an error in the envelope (used by the error middleware and by pre-route failures). */
export function sendError(res: Response, err: unknown, logger: Logger, path: string): void {
  const { status, body, headers } = errorResponse(err, logger, { ingestion: isIngestionPath(path) });
  if (res.headersSent) return;
  res.status(status).set(headers).json(body);
}

/**
 * An express app with the platform's edge behaviour: request ids, one log line per
 * request, paths that decode, flat query strings (`parseQueryString`), JSON bodies with
 * size limits that Postgres can store (`assertStorableJson`), and errors in the spec's envelope.
 * Call `finishApp` after mounting routes.
 */
export function createHttpApp({ logger, service, resolveRoute, bodyLimits = [] }: HttpAppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', parseQueryString);
  app.use(observeRequests(service, resolveRoute));

  app.use((req: Request, res: Response, next: NextFunction) => {
    const incoming = req.header(INTERNAL_HEADERS.requestId);
    const requestId = incoming && REQUEST_ID_PATTERN.test(incoming) ? incoming : newUlid();
    res.locals.requestId = requestId;
    // The request's logger is made on first use (`loggerOf`): most requests never log. Plain
    // data properties: an accessor defined per request would give each `locals` a hidden class
    // of its own, which young-generation GCs keep alive with the request (ADR 0029).
    res.locals.appLogger = logger;
    res.setHeader('X-Request-Id', requestId);
    // winston formats a line before its transports drop it by level: skip it up front.
    if (!logger.isLevelEnabled('http')) return next();
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      const ctx = res.locals.ctx as RequestContext | undefined;
      loggerOf(res, logger).http('request', {
        method: req.method,
        path: req.path,
        status: res.statusCode,
        duration_ms: Math.round(ms * 100) / 100,
        tenant_id: ctx?.tenantId,
      });
    });
    next();
  });

  app.use((req: Request, _res: Response, next: NextFunction) => {
    assertDecodablePath(req.path);
    next();
  });

  const sorted = [...bodyLimits].sort((a, b) => b.pathPrefix.length - a.pathPrefix.length);
  const parsers = sorted.map((l) => ({ prefix: l.pathPrefix, parse: jsonParser(l.bytes) }));
  const defaultParser = jsonParser(MiB);
  // Routes whose body is a file (`rawBody`): no JSON parser reads it; the handler streams it.
  const rawBodyRoutes = ALL_ROUTES.filter((def) => def.rawBody && !def.path.includes(':')).map((def) => `${def.method.toUpperCase()} ${def.path}`);
  app.use((req: Request, res: Response, next: NextFunction) => {
    if (rawBodyRoutes.includes(`${req.method} ${req.path}`)) return next();
    const parser = parsers.find((p) => req.path === p.prefix || req.path.startsWith(p.prefix + '/'))?.parse ?? defaultParser;
    parser(req, res, (err?: unknown) => {
      if (!err) {
        if (req.body === undefined) return next();
        const checkStrings = (req as ParsedRequest)[MAY_HOLD_UNSTORABLE] ?? true;
        try {
          assertStorableJson(req.body, { checkStrings });
        } catch (refused) {
          return next(refused);
        }
        return next();
      }
      const type = (err as { type?: string }).type;
      if (type === 'entity.too.large') {
        return next(new PayloadTooLargeError('Request body is too large', { limit_bytes: (err as { limit?: number }).limit }));
      }
      if (type === 'entity.parse.failed') return next(new ValidationError('Request body is not valid JSON'));
      if (type === 'encoding.unsupported' || type === 'charset.unsupported') {
        return next(new ValidationError('Request body must be UTF-8 JSON'));
      }
      return next(err);
    });
  });
  return app;
}

/** Adds the 404 handler and the error middleware; call once, after every route. */
export function finishApp(app: Express, logger: Logger): Express {
  app.use((req: Request) => {
    throw new NotFoundError(`No route for ${req.method} ${req.path}`, { method: req.method, path: req.path });
  });
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    void _next;
    sendError(res, err, loggerOf(res, logger), req.path);
  });
  return app;
}

/** `/healthz` (process up) and `/readyz` (dependencies reachable; 503 when not). */
export function mountHealth(app: Express, ready: () => Promise<Record<string, boolean>>): void {
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    const checks = await ready();
    const ok = Object.values(checks).every(Boolean);
    res.status(ok ? 200 : 503).json({ status: ok ? 'ready' : 'not_ready', checks });
  });
}

function safeEqual(a: string, b: string): boolean {
  const ba = Buffer.from(a);
  const bb = Buffer.from(b);
  return ba.length === bb.length && timingSafeEqual(ba, bb);
}

/**
 * The request context of a call forwarded by the gateway: the internal token must match, and
 * the tenant, environment and actor headers become the context (401 otherwise).
 */
export function internalContextOf(headers: IncomingHttpHeaders, token: string, requestId: string): RequestContext {
  const one = (name: string) => {
    const v = headers[name];
    return Array.isArray(v) ? v[0] : v;
  };
  const given = one(INTERNAL_HEADERS.token) ?? '';
  const tenantId = one(INTERNAL_HEADERS.tenant);
  const environmentId = one(INTERNAL_HEADERS.environment);
  if (!safeEqual(given, token) || !tenantId || !environmentId) {
    throw new UnauthenticatedError('Internal calls need the internal token and a tenant');
  }
  const permissions = one(INTERNAL_HEADERS.permissions);
  const ctx: RequestContext = { tenantId, environmentId, actor: one(INTERNAL_HEADERS.actor) ?? 'system', requestId };
  if (permissions !== undefined) ctx.permissions = permissions.split(',').filter(Boolean);
  return ctx;
}

/**
 * Accepts only calls forwarded by the gateway: the internal token must match, and the
 * tenant, environment and actor headers become the request context.
 */
export function internalAuth(token: string) {
  return (req: Request, res: Response, next: NextFunction) => {
    if (req.path === '/healthz' || req.path === '/readyz') return next();
    try {
      res.locals.ctx = internalContextOf(req.headers, token, String(res.locals.requestId));
    } catch (err) {
      return next(err);
    }
    next();
  };
}
