import type { NextFunction, Request, Response } from 'express';
import { extractContext, markFailed, metricsEnabled, recordHttpRequest, SpanKind, startSpan, tracingEnabled, withSpan } from '@billstream/observability';

/** Finds the route template of a request that was answered before express matched a route (a 401 of the gateway). */
export type RouteResolver = (method: string, path: string) => string | undefined;

/**
 * The route template a request matched (`/v1/customers/:customer_id`), or `unmatched`: never
 * the path, which holds ids.
 */
export function routeTemplateOf(req: Request, resolve?: RouteResolver): string {
  const path = (req.route as { path?: unknown } | undefined)?.path;
  if (typeof path === 'string') return req.baseUrl + path;
  if (!resolve) return 'unmatched';
  // originalUrl: a middleware mounted on a prefix that answered left req.path without it.
  const query = req.originalUrl.indexOf('?');
  return resolve(req.method, query < 0 ? req.originalUrl : req.originalUrl.slice(0, query)) ?? 'unmatched';
}

/** A resolver over route templates (`:name` matches one path segment), tried in order. */
export function templateResolver(routes: ReadonlyArray<{ method: string; path: string }>): RouteResolver {
  const compiled = routes.map((r) => ({
    method: r.method.toUpperCase(),
    template: r.path,
    pattern: new RegExp(`^${r.path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[A-Za-z0-9_]+/g, '[^/]+')}/?$`),
  }));
  return (method, path) => compiled.find((r) => r.method === method && r.pattern.test(path))?.template;
}

/**
 * Metrics and tracing of every request of an app (ADR 0020): a count by status and a latency
 * by route template (`billstream_http_*`), and a server span that continues the caller's W3C
 * trace context (`traceparent`), with the rest of the request run inside it. With neither
 * metrics nor tracing on, a request costs two boolean tests here.
 */
export function observeRequests(service: string, resolveRoute?: RouteResolver) {
  return (req: Request, res: Response, next: NextFunction) => {
    const metrics = metricsEnabled();
    const tracing = tracingEnabled();
    if (!metrics && !tracing) return next();
    const started = metrics ? process.hrtime.bigint() : 0n;
    const span = tracing
      ? startSpan(`${req.method} ${service}`, SpanKind.SERVER, extractContext(req.headers), {
          'http.request.method': req.method,
          'url.path': req.path,
          'billstream.service': service,
        })
      : undefined;
    res.once('finish', () => {
      const route = routeTemplateOf(req, resolveRoute);
      if (metrics) recordHttpRequest(service, req.method, route, res.statusCode, Number(process.hrtime.bigint() - started) / 1e9);
      if (span) {
        span.updateName(`${req.method} ${route}`);
        span.setAttribute('http.route', route);
        span.setAttribute('http.response.status_code', res.statusCode);
        if (res.statusCode >= 500) markFailed(span);
        span.end();
      }
    });
    if (!span) return next();
    // A request whose client went away ends its span all the same.
    res.once('close', () => {
      if (!res.writableFinished) span.end();
    });
    withSpan(span, next, [req, res]);
  };
}
