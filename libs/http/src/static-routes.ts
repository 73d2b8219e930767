import type { Express, NextFunction, Request, RequestHandler, Response } from 'express';

/** What this module reads of express 5's router (the `router` package, 2.x). */
interface RouteLike {
  path: unknown;
  methods: Record<string, boolean>;
  _handlesMethod(method: string): boolean;
  dispatch(req: Request, res: Response, done: (err?: unknown) => void): void;
}
interface LayerLike {
  handle: unknown;
  route?: RouteLike;
  match(path: string): boolean;
}

/** A path express matches only as itself: no parameters, wildcards or patterns. */
const STATIC_PATH = /^(\/[A-Za-z0-9._~-]+)+$/;

/**
 * Sends a request whose method and path are exactly those of a route with a static path
 * (`POST /v1/entitlements/check`) straight to that route, instead of letting express test it
 * against every layer mounted before it (the gateway mounts about 80 routes, one layer each).
 * Mount it where the routes start: after every middleware a routed request must pass. The
 * table is made at the first request from the layers mounted after this one, and a route goes
 * in only where express would reach it all the same: when no layer between (a middleware on
 * its path, or an earlier route for its method and path, e.g. `/v1/things/:id`) would take
 * the request first. Anything else (other cases, a trailing slash, HEAD) walks the layers as
 * before. The route's own handlers run as express runs them (`Route.dispatch`).
 */
export function staticRoutes(app: Express): RequestHandler {
  let table: Map<string, RouteLike> | undefined;
  const dispatch: RequestHandler = (req: Request, res: Response, next: NextFunction) => {
    table ??= tableOf(app, dispatch);
    const route = table.get(`${req.method} ${req.path}`);
    if (!route) return next();
    req.params = {};
    route.dispatch(req, res, next);
  };
  return dispatch;
}

function tableOf(app: Express, self: RequestHandler): Map<string, RouteLike> {
  const stack = (app as unknown as { router: { stack: LayerLike[] } }).router.stack;
  const start = stack.findIndex((layer) => layer.handle === self);
  const table = new Map<string, RouteLike>();
  if (start < 0) return table;
  const between: LayerLike[] = [];
  for (const layer of stack.slice(start + 1)) {
    const route = layer.route;
    if (route && typeof route.path === 'string' && STATIC_PATH.test(route.path)) {
      const path = route.path;
      for (const method of Object.keys(route.methods).filter((m) => m !== '_all')) {
        const METHOD = method.toUpperCase();
        const key = `${METHOD} ${path}`;
        const takenBefore = between.some((b) => b.match(path) && (!b.route || b.route._handlesMethod(METHOD)));
        if (!table.has(key) && !takenBefore) table.set(key, route);
      }
    }
    between.push(layer);
  }
  return table;
}
