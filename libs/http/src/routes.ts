import type { Express, Request, RequestHandler, Response } from 'express';
import type { z } from 'zod';
import { ALL_ROUTES, type InputOf, type RouteDef, type ServiceName } from '@billstream/contracts';
import type { Logger } from '@billstream/logger';
import { contextOf, type RequestContext } from './context';
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
 * takes no query parameter; a parameter repeated where one value is expected is refused.
 */
export function parseRouteInput<D extends RouteDef>(def: D, req: Request) {
  return {
    params: (def.params ? parseOrThrow(def.params, req.params, 'Path') : undefined) as InputOf<D['params']>,
    query: parseQuery(def.query, (req.query ?? {}) as QueryParams) as InputOf<D['query']>,
    body: (def.body ? parseOrThrow(def.body, req.body ?? {}, 'Body') : undefined) as InputOf<D['body']>,
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

export function mountRoute<D extends RouteDef>(app: Express, def: D, handler: RouteHandler<D>, logger: Logger, ...before: RequestHandler[]): void {
  const run = routeRunner(def, handler, logger);
  routeTableOf(app).set(def.operationId, run);
  app[def.method](def.path, ...before, run);
}

function routeRunner<D extends RouteDef>(def: D, handler: RouteHandler<D>, logger: Logger): RouteRunner {
  return async (req: Request, res: Response) => {
    const input = parseRouteInput(def, req);
    const result = await handler({
      ...input,
      ctx: contextOf(res),
      get logger() {
        return (res.locals.logger as Logger | undefined) ?? logger;
      },
      req,
      res,
    });
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
