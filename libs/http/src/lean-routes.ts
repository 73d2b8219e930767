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
  context(req: IncomingMessage, requestId: string): RequestContext | Promise<RequestContext>;
  /** `body`: validated by the route's schema; `raw`: as sent (what a proxy forwards). */
  answer(input: { body: unknown; raw: unknown; ctx: RequestContext; req: IncomingMessage; requestId: string }): Promise<LeanAnswer>;
}

const LEAN = Symbol('billstream.leanRoutes');
const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;
const JSON_TYPES = new Set(['application/json', 'application/json; charset=utf-8', 'application/json;charset=utf-8']);

interface LeanTable {
  service: string;
  logger: Logger;
  limit: number;
  routes: Map<string, LeanRoute>;
}

/**
 * Serves `route` (a static path, a JSON body) on `app`'s server without express when the request
 * is an ordinary one. Only what the route's express path would answer the same way goes here:
 * the exact method and path, no query string, a `Content-Type` of JSON in UTF-8, a
 * `Content-Length` of 1 to `limit` bytes, no `Content-Encoding` or `Transfer-Encoding`, no byte
 * order mark, tracing and access logs off. Anything else is handed to express untouched (its
 * body not read). Metrics are recorded as express's requests are (`billstream_http_*`).
 */
export function mountLeanRoute(app: Express, options: { service: string; logger: Logger; limit: number }, route: LeanRoute): void {
  const holder = app as unknown as { [LEAN]?: LeanTable };
  const table = (holder[LEAN] ??= { ...options, routes: new Map() });
  table.routes.set(`${route.def.method.toUpperCase()} ${route.def.path}`, route);
}

/**
 * The request listener of `app`'s server: its lean routes (`mountLeanRoute`) first, express for
 * everything else. Without lean routes, `app` itself.
 */
export function requestListener(app: Express): (req: IncomingMessage, res: ServerResponse) => void {
  const table = (app as unknown as { [LEAN]?: LeanTable })[LEAN];
  if (!table) return app;
  return (req, res) => {
    const route = table.routes.get(`${req.method} ${req.url}`);
    if (!route || !ordinary(req, table)) {
      app(req, res);
      return;
    }
    serve(table, route, req, res);
  };
}

function ordinary(req: IncomingMessage, table: LeanTable): boolean {
  const h = req.headers;
  const type = h['content-type']?.toLowerCase();
  const length = Number(h['content-length']);
  return (
    type !== undefined &&
    JSON_TYPES.has(type) &&
    Number.isInteger(length) &&
    length > 0 &&
    length <= table.limit &&
    h['content-encoding'] === undefined &&
    h['transfer-encoding'] === undefined &&
    !tracingEnabled() &&
    !table.logger.isLevelEnabled('http')
  );
}

function serve(table: LeanTable, route: LeanRoute, req: IncomingMessage, res: ServerResponse): void {
  const started = process.hrtime.bigint();
  const incoming = req.headers['x-request-id'];
  const requestId = typeof incoming === 'string' && REQUEST_ID_PATTERN.test(incoming) ? incoming : newUlid();
  res.setHeader('X-Request-Id', requestId);
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('error', () => res.destroy());
  req.on('end', () => {
    answer(route, req, Buffer.concat(chunks), requestId)
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

async function answer(route: LeanRoute, req: IncomingMessage, raw: Buffer, requestId: string): Promise<LeanAnswer> {
  // A byte order mark: the express path decodes it away; leave such a body to nobody's guess.
  if (raw[0] === 0xef) throw new ValidationError('Request body is not valid JSON');
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new ValidationError('Request body is not valid JSON');
  }
  assertStorableJson(body, { checkStrings: mayHoldUnstorableText(raw) });
  const ctx = await route.context(req, requestId);
  const input = parseRouteInput(route.def, { params: {}, query: {}, body, headers: req.headers } as unknown as Parameters<typeof parseRouteInput>[1]);
  return route.answer({ body: input.body, raw: body, ctx, req, requestId });
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
