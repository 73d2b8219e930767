import type { Express, NextFunction, Request, Response } from 'express';
import { createLogger } from '@billstream/logger';
import { ForbiddenError } from '@billstream/errors';
import { createHttpApp, finishApp } from './app';
import { listen, type Listening } from './server';
import { staticRoutes } from './static-routes';

const logger = createLogger({ service: 'test', level: 'silent' });

describe('staticRoutes: a static route is reached directly, exactly as express would reach it', () => {
  let http: Listening;
  const seen: string[] = [];

  beforeAll(async () => {
    const app: Express = createHttpApp({ logger, service: 'test' });
    app.use(staticRoutes(app));
    const note = (name: string) => (req: Request, res: Response) => {
      seen.push(`${name} ${req.method} ${req.path}`);
      res.json({ by: name, route: (req.route as { path: string }).path, params: req.params });
    };
    app.get('/v1/things/:id', note('things-by-id'));
    // Never reached for GET: the parameter route above takes it, with or without the table.
    app.get('/v1/things/search', note('things-search'));
    app.post('/v1/things/search', note('things-search-post'));
    app.use('/v1/guarded', (_req: Request, _res: Response, next: NextFunction) => next(new ForbiddenError('guarded')));
    app.post('/v1/guarded/run', note('guarded-run'));
    app.post(
      '/v1/check',
      (req: Request, _res: Response, next: NextFunction) => {
        if (req.body?.deny) throw new ForbiddenError('denied');
        next();
      },
      note('check'),
    );
    app.post('/v1/fails', async () => {
      throw new ForbiddenError('fails');
    });
    finishApp(app, logger);
    http = await listen(app, 0, '127.0.0.1');
  });
  afterAll(async () => {
    await http.close();
  });

  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${http.url}${path}`, { method, headers: body ? { 'content-type': 'application/json' } : {}, body: body ? JSON.stringify(body) : undefined });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };

  it('runs the route and its handler chain; a throw in the chain is the error envelope', async () => {
    expect(await call('POST', '/v1/check', {})).toEqual({ status: 200, body: { by: 'check', route: '/v1/check', params: {} } });
    const denied = await call('POST', '/v1/check', { deny: true });
    expect([denied.status, denied.body.error.message]).toEqual([403, 'denied']);
    const failed = await call('POST', '/v1/fails', {});
    expect([failed.status, failed.body.error.message]).toEqual([403, 'fails']);
  });

  it('leaves to express what an earlier layer takes: a parameter route, or a middleware on the path', async () => {
    expect((await call('GET', '/v1/things/search')).body).toEqual({ by: 'things-by-id', route: '/v1/things/:id', params: { id: 'search' } });
    expect((await call('POST', '/v1/things/search', {})).body.by).toBe('things-search-post');
    const guarded = await call('POST', '/v1/guarded/run', {});
    expect([guarded.status, guarded.body.error.message]).toEqual([403, 'guarded']);
  });

  it('whatever it does not hold walks the layers as before: other case, trailing slash, HEAD, unknown paths', async () => {
    expect((await call('POST', '/v1/Check', {})).body.by).toBe('check');
    expect((await call('POST', '/v1/check/', {})).body.by).toBe('check');
    expect((await call('GET', '/v1/check')).status).toBe(404);
    expect((await call('HEAD', '/v1/things/x')).status).toBe(200);
    expect((await call('GET', '/v1/nothing')).status).toBe(404);
  });

  it('runs a route once per request', async () => {
    seen.length = 0;
    await call('POST', '/v1/check', {});
    await call('POST', '/v1/things/search', {});
    expect(seen).toEqual(['check POST /v1/check', 'things-search-post POST /v1/things/search']);
  });

  it('skips the layers before the route (fewer layers tested than for the same route reached by walking)', async () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const Layer = require('router/lib/layer') as { prototype: { match(path: string): boolean } };
    const original = Layer.prototype.match;
    let tested = 0;
    Layer.prototype.match = function match(this: unknown, path: string) {
      tested += 1;
      return original.call(this, path);
    };
    try {
      const count = async (path: string) => {
        tested = 0;
        expect((await call('POST', path, {})).body.by).toBe('check');
        return tested;
      };
      const direct = await count('/v1/check');
      const walked = await count('/v1/Check');
      expect(walked - direct).toBeGreaterThanOrEqual(5);
    } finally {
      Layer.prototype.match = original;
    }
  });
});
