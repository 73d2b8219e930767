import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Express } from 'express';
import type { RouteDef } from '@billstream/contracts';
import { ValidationError } from '@billstream/errors';
import { newUlid } from '@billstream/ids';
import type { Logger } from '@billstream/logger';
import { metricsEnabled, recordHttpRequest, tracingEnabled } from '@billstream/observability';
import type { RequestContext } from './context';
import { errorResponse } from './errors';
import { assertStorableJson, mayHoldUnstorableText } from './json-guard';
import { parseRouteInput } from './routes';

/** What a lean route answers: a JSON body (serialised here) or a payload already serialised. */
export interface LeanAnswer {
  status: number;
  body?: unknown;
  payload?: Buffer;
  headers?: Record<string, string>;
}

/**
 * A route served without express (ADR 0027): the same checks in the same order as its express
 * route, written as plain functions. `context` checks the caller (the gateway's API key, rate
 * limit and permission, or a service's internal token) and throws the error the express
 * middleware would; `answer` gets the body validated by the route's schema.
 */
export interface LeanRoute {
  def: RouteDef;
  /**
   * For a path with parameters: the other routes of the app that express might match first for
   * a path this one matches (the same method; any order). A path one of them also matches goes
   * to express, which decides as it always does.
   */
  rivals?: readonly RouteDef[];
  context(req: IncomingMessage, requestId: string): RequestContext | Promise<RequestContext>;
  /**
   * `body`, `params`, `query`: validated by the route's schemas (`query` as for no query
   * string: a lean request has none); `raw`: the body as sent (what a proxy forwards).
   */
  answer(input: { body: unknown; params: unknown; query: unknown; raw: unknown; ctx: RequestContext; req: IncomingMessage; requestId: string }): Promise<LeanAnswer>;
}

/** A path template as segments (`/v1/wallets/:id/debit` -> ['v1', 'wallets', ':id', 'debit']). */
const segmentsOf = (path: string) => path.split('/').slice(1);

/**
 * A path segment taken as a parameter's value on the lean path: unreserved characters only, so
 * express's decoding would leave it as it is (anything else goes to express).
 */
const PLAIN_SEGMENT = /^[A-Za-z0-9._~-]+$/;

interface LeanPattern {
  segments: string[];
  route: LeanRoute;
  rivals: string[][];
}

/** Whether two templates can match one path: as long, and at each place equal words or a parameter. */
function overlap(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i] || x.startsWith(':') || (b[i] as string).startsWith(':'));
}

/** The parameters of `path` (segments) under `template`, or undefined when it does not match. */
function matchSegments(template: string[], path: string[]): Record<string, string> | undefined {
  if (template.length !== path.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < template.length; i += 1) {
    const t = template[i] as string;
    const p = path[i] as string;
    if (t.startsWith(':')) {
      if (!PLAIN_SEGMENT.test(p)) return undefined;
      params[t.slice(1)] = p;
    } else if (t !== p) return undefined;
  }
  return params;
}

const LEAN = Symbol('billstream.leanRoutes');
const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;
const JSON_TYPES = new Set(['application/json', 'application/json; charset=utf-8', 'application/json;charset=utf-8']);

interface LeanTable {
  service: string;
  logger: Logger;
  limit: number;
  routes: Map<string, LeanRoute>;
  /** Routes with parameters in their path, by method. */
  patterns: Map<string, LeanPattern[]>;
}

/**
 * Serves `route` on `app`'s server without express when the request is an ordinary one. Only
 * what the route's express path would answer the same way goes here: the exact method and path
 * (a parameter's value of unreserved characters, no rival route matching the path), no query
 * string, no `Content-Encoding` or `Transfer-Encoding`, tracing and access logs off; and for a
 * route with a body, a `Content-Type` of JSON in UTF-8, a `Content-Length` of 1 to `limit` bytes
 * and no byte order mark; for a route without one, no body (`Content-Length` absent or 0).
 * Anything else is handed to express untouched (its body not read). Metrics are recorded as
 * express's requests are (`billstream_http_*`).
 */
export function mountLeanRoute(app: Express, options: { service: string; logger: Logger; limit: number }, route: LeanRoute): void {
  const holder = app as unknown as { [LEAN]?: LeanTable };
  const table = (holder[LEAN] ??= { ...options, routes: new Map(), patterns: new Map() });
  const method = route.def.method.toUpperCase();
  if (!route.def.path.includes(':')) {
    table.routes.set(`${method} ${route.def.path}`, route);
    return;
  }
  const segments = segmentsOf(route.def.path);
  const rivals = (route.rivals ?? [])
    .filter((d) => d !== route.def && d.path !== route.def.path && d.method === route.def.method)
    .map((d) => segmentsOf(d.path))
    .filter((r) => overlap(r, segments));
  const list = table.patterns.get(method) ?? [];
  list.push({ segments, route, rivals });
  table.patterns.set(method, list);
}

/** The lean route of a request with a parameter in its path, and the parameters; undefined for express. */
function matchPattern(table: LeanTable, method: string, url: string): { route: LeanRoute; params: Record<string, string> } | undefined {
  const list = table.patterns.get(method);
  if (!list || url.includes('?')) return undefined;
  const path = segmentsOf(url);
  for (const p of list) {
    const params = matchSegments(p.segments, path);
    if (!params) continue;
    if (p.rivals.some((r) => rivalMatches(r, path))) return undefined;
    return { route: p.route, params };
  }
  return undefined;
}

/** Whether express could route `path` to a rival template (its words equal, any value for a parameter). */
function rivalMatches(rival: string[], path: string[]): boolean {
  return rival.length === path.length && rival.every((x, i) => x.startsWith(':') || x.toLowerCase() === (path[i] as string).toLowerCase());
}

/**
 * The request listener of `app`'s server: its lean routes (`mountLeanRoute`) first, express for
 * everything else. Without lean routes, `app` itself.
 */
export function requestListener(app: Express): (req: IncomingMessage, res: ServerResponse) => void {
  const table = (app as unknown as { [LEAN]?: LeanTable })[LEAN];
  if (!table) return app;
  return (req, res) => {
    const method = req.method ?? '';
    const url = req.url ?? '';
    const exact = table.routes.get(`${method} ${url}`);
    const found = exact ? { route: exact, params: {} } : matchPattern(table, method, url);
    if (!found || !ordinary(req, table, found.route.def)) {
      app(req, res);
      return;
    }
    serve(table, found.route, found.params, req, res);
  };
}

function ordinary(req: IncomingMessage, table: LeanTable, def: RouteDef): boolean {
  const h = req.headers;
  if (h['content-encoding'] !== undefined || h['transfer-encoding'] !== undefined || tracingEnabled() || table.logger.isLevelEnabled('http')) return false;
  const declared = h['content-length'];
  if (def.body === undefined) return declared === undefined || declared === '0';
  const type = h['content-type']?.toLowerCase();
  const length = Number(declared);
  return type !== undefined && JSON_TYPES.has(type) && Number.isInteger(length) && length > 0 && length <= table.limit;
}

function serve(table: LeanTable, route: LeanRoute, params: Record<string, string>, req: IncomingMessage, res: ServerResponse): void {
  const started = process.hrtime.bigint();
  const incoming = req.headers['x-request-id'];
  const requestId = typeof incoming === 'string' && REQUEST_ID_PATTERN.test(incoming) ? incoming : newUlid();
  res.setHeader('X-Request-Id', requestId);
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('error', () => res.destroy());
  req.on('end', () => {
    answer(route, params, req, Buffer.concat(chunks), requestId)
      .catch((err: unknown) => {
        const { status, body, headers } = errorResponse(err, table.logger.child({ requestId }), { ingestion: false });
        return { status, body, headers } as LeanAnswer;
      })
      .then((a) => {
        send(res, a);
        if (metricsEnabled()) recordHttpRequest(table.service, req.method ?? 'POST', route.def.path, a.status, Number(process.hrtime.bigint() - started) / 1e9);
      })
      .catch(() => res.destroy());
  });
}

async function answer(route: LeanRoute, params: Record<string, string>, req: IncomingMessage, raw: Buffer, requestId: string): Promise<LeanAnswer> {
  let body: unknown;
  if (route.def.body !== undefined) {
    // A byte order mark: the express path decodes it away; leave such a body to nobody's guess.
    if (raw[0] === 0xef) throw new ValidationError('Request body is not valid JSON');
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      throw new ValidationError('Request body is not valid JSON');
    }
    assertStorableJson(body, { checkStrings: mayHoldUnstorableText(raw) });
  }
  const ctx = await route.context(req, requestId);
  const input = parseRouteInput(route.def, { params, query: {}, body, headers: req.headers } as unknown as Parameters<typeof parseRouteInput>[1]);
  return route.answer({ body: input.body, params: input.params, query: input.query, raw: body, ctx, req, requestId });
}

function send(res: ServerResponse, a: LeanAnswer): void {
  if (res.headersSent) return;
  res.statusCode = a.status;
  for (const [k, v] of Object.entries(a.headers ?? {})) res.setHeader(k, v);
  const payload = a.payload ?? (a.body === undefined ? undefined : Buffer.from(JSON.stringify(a.body)));
  if (payload === undefined || payload.length === 0) {
    res.end();
    return;
  }
  if (a.payload === undefined || !res.hasHeader('content-type')) res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', payload.length);
  res.end(payload);
}
