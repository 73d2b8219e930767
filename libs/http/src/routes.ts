import type { Express, Request, RequestHandler, Response } from 'express';
import type { z } from 'zod';
import { ALL_ROUTES, type InputOf, type RouteDef, type ServiceName } from '@billstream/contracts';
import type { Logger } from '@billstream/logger';
import { contextOf, loggerOf, type RequestContext } from './context';
import { withIdempotencyKey } from './idempotency-key';
import { parseQuery, type QueryParams } from './query';
import { parseOrThrow } from './validation';

export interface RouteInput<D extends RouteDef> {
  params: InputOf<D['params']>;
  query: InputOf<D['query']>;
  body: InputOf<D['body']>;
  ctx: RequestContext;
  logger: Logger;
  req: Request;
  res: Response;
}

/** A handler may return the body, or a result with its own status and headers. */
export class HttpResult<T = unknown> {
  constructor(
    readonly body: T,
    readonly status?: number,
    readonly headers: Record<string, string> = {},
  ) {}
}

/**
 * What a handler gets. `logger` is a getter of this class, made on first use: the request's
 * logger (`loggerOf`) on the express path, a child with the request id on the lean path.
 *
 * Not a `get logger()` in an object literal made per request (ADR 0029): an accessor defined
 * per object gives each object a hidden class of its own, which V8's young-generation GC keeps
 * alive (hidden classes are reached from the old generation), and with it the getter's closure
 * and the request it holds. At 1,000 checks/s that promoted ~3 KB per request to billing's old
 * generation: a 5-15 ms scavenge 3-4 times a second and a mark-compact every few seconds.
 */
class HandlerInput<D extends RouteDef> implements RouteInput<D> {
  private child?: Logger;

  constructor(
    readonly params: InputOf<D['params']>,
    readonly query: InputOf<D['query']>,
    readonly body: InputOf<D['body']>,
    readonly ctx: RequestContext,
    readonly req: Request,
    private readonly response: Response | undefined,
    private readonly base: Logger,
  ) {}

  get logger(): Logger {
    if (this.response) return loggerOf(this.response, this.base);
    return (this.child ??= this.base.child({ requestId: this.ctx.requestId }));
  }

  /** The express response; none on the lean path (ADR 0027), whose handlers must not use it. */
  get res(): Response {
    return this.response as Response;
  }
}

/**
 * The body a handler of route D answers with: the output type of the route's response
 * schema (what the OpenAPI document promises), checked by TypeScript. A route without a
 * response schema (204) answers nothing.
 */
export type ResponseOf<D extends RouteDef> = [Exclude<D['response'], undefined>] extends [never]
  ? void
  : z.output<Exclude<D['response'], undefined>>;

export type RouteHandler<D extends RouteDef> = (input: RouteInput<D>) => Promise<ResponseOf<D> | HttpResult<ResponseOf<D>>>;

/**
 * Validates params, query and body with the route's schemas. A route without a query schema
 * takes no query parameter; a parameter repeated where one value is expected is refused. A
 * body that takes `idempotency_key` gets the `Idempotency-Key` header merged in first (ADR 0035).
 */
export function parseRouteInput<D extends RouteDef>(def: D, req: Request) {
  return {
    params: (def.params ? parseOrThrow(def.params, req.params, 'Path') : undefined) as InputOf<D['params']>,
    query: parseQuery(def.query, (req.query ?? {}) as QueryParams) as InputOf<D['query']>,
    body: (def.body ? parseOrThrow(def.body, withIdempotencyKey(def, req.body ?? {}, req.headers), 'Body') : undefined) as InputOf<D['body']>,
  };
}

/** A mounted route's whole work on a request: validation, handler, answer. */
export type RouteRunner = (req: Request, res: Response) => Promise<void>;

const ROUTE_TABLE = Symbol('billstream.routeTable');

/**
 * The routes mounted on `app` with `mountRoute`, by operationId. The embedded default's
 * gateway runs these directly for services in its process (same validation, handler and
 * answer, on the gateway's request, which is already authenticated and scoped), instead of
 * a second HTTP request over loopback.
 */
export function routeTableOf(app: Express): Map<string, RouteRunner> {
  const holder = app as unknown as { [ROUTE_TABLE]?: Map<string, RouteRunner> };
  return (holder[ROUTE_TABLE] ??= new Map());
}

const HANDLER_TABLE = Symbol('billstream.handlerTable');

/** The handlers mounted on `app` with `mountRoute` (and no middleware before them), by operationId. */
export function handlerTableOf(app: Express): Map<string, { def: RouteDef; handler: RouteHandler<RouteDef> }> {
  const holder = app as unknown as { [HANDLER_TABLE]?: Map<string, { def: RouteDef; handler: RouteHandler<RouteDef> }> };
  return (holder[HANDLER_TABLE] ??= new Map());
}

export function mountRoute<D extends RouteDef>(app: Express, def: D, handler: RouteHandler<D>, logger: Logger, ...before: RequestHandler[]): void {
  const run = routeRunner(def, handler, logger);
  routeTableOf(app).set(def.operationId, run);
  if (before.length === 0) handlerTableOf(app).set(def.operationId, { def, handler: handler as unknown as RouteHandler<RouteDef> });
  app[def.method](def.path, ...before, run);
}

/**
 * The answer of a `mountRoute` handler to a lean request (ADR 0027), as its route runner would
 * give it: the handler's body with the route's status, or an `HttpResult`'s status and headers.
 * Only for handlers that use the validated input and the context, not express's `req`/`res`.
 */
export async function leanAnswerOf<D extends RouteDef>(
  def: D,
  handler: RouteHandler<D>,
  logger: Logger,
  input: { body: unknown; params?: unknown; query?: unknown; ctx: RequestContext; req: unknown },
): Promise<{ status: number; body?: unknown; headers?: Record<string, string> }> {
  const result = await handler(
    new HandlerInput<D>(input.params as InputOf<D['params']>, input.query as InputOf<D['query']>, input.body as InputOf<D['body']>, input.ctx, input.req as Request, undefined, logger),
  );
  if (result instanceof HttpResult) {
    const status = result.status ?? def.status;
    return { status, headers: result.headers, body: status === 204 ? undefined : result.body };
  }
  return def.status === 204 ? { status: 204 } : { status: def.status, body: result };
}

function routeRunner<D extends RouteDef>(def: D, handler: RouteHandler<D>, logger: Logger): RouteRunner {
  return async (req: Request, res: Response) => {
    const input = parseRouteInput(def, req);
    const result = await handler(new HandlerInput<D>(input.params, input.query, input.body, contextOf(res), req, res, logger));
    if (res.headersSent) return;
    if (result instanceof HttpResult) {
      res.status(result.status ?? def.status).set(result.headers);
      if (result.status === 204 || (result.status === undefined && def.status === 204)) res.end();
      else res.json(result.body);
      return;
    }
    if (def.status === 204) res.status(204).end();
    else res.status(def.status).json(result);
  };
}

/** The registry's routes owned by `service` that `app` does not mount (with `mountRoute`). */
export function unmountedRoutes(app: Express, service: ServiceName, registry: readonly RouteDef[] = ALL_ROUTES): RouteDef[] {
  const mounted = routeTableOf(app);
  return registry.filter((def) => def.service === service && !mounted.has(def.operationId));
}

/**
 * Refuses to start a service that does not mount every route the registry gives it: the
 * gateway would forward such a call, and the service would answer a silent 404.
 */
export function assertRoutesMounted(app: Express, service: ServiceName, registry: readonly RouteDef[] = ALL_ROUTES): void {
  const missing = unmountedRoutes(app, service, registry);
  if (missing.length === 0) return;
  const names = missing.map((def) => `${def.operationId} (${def.method.toUpperCase()} ${def.path})`).join(', ');
  throw new Error(`${service} does not mount ${missing.length} route(s) the registry gives it: ${names}; refusing to start`);
}
