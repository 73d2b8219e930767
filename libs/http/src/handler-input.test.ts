import { setFlagsFromString } from 'node:v8';
import type { Express, NextFunction, Request, Response } from 'express';
import { z } from 'zod';
import { defineRoute } from '@billstream/contracts';
import { createLogger, type Logger } from '@billstream/logger';
import { createHttpApp, finishApp, internalAuth, internalContextOf, MiB } from './app';
import { mountLeanRoute } from './lean-routes';
import { leanAnswerOf, mountRoute, type RouteHandler, type RouteInput } from './routes';
import { listen, type Listening } from './server';

// `%HaveSameMap` (V8's natives syntax) tells whether two objects share a hidden class.
setFlagsFromString('--allow-natives-syntax');
const haveSameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: object, b: object) => boolean;

const def = defineRoute({
  operationId: 'inputThing',
  method: 'post',
  path: '/v1/input/check',
  service: 'billing',
  permission: 'plans:read',
  summary: 'x',
  tag: 'x',
  body: z.strictObject({ name: z.string() }),
  response: z.object({ name: z.string() }),
  status: 200,
});

/**
 * ADR 0029: what a handler gets, and the request's `res.locals`, have no accessor of their own.
 * An accessor defined per request gives each such object a hidden class of its own, which V8's
 * young-generation GC keeps alive with what the accessor's closure holds (the request): at
 * 1,000 checks/s that promoted ~3 KB per request to billing's old generation.
 */
describe('handler inputs and request locals (ADR 0029)', () => {
  let http: Listening;
  const base = createLogger({ service: 'test', level: 'silent' });
  const children: Array<Record<string, unknown>> = [];
  const seen: Array<{ input: RouteInput<typeof def>; locals?: Record<string, unknown>; logger: Logger }> = [];

  beforeAll(async () => {
    const child = base.child.bind(base);
    jest.spyOn(base, 'child').mockImplementation((meta: object) => {
      children.push({ ...meta });
      return child(meta);
    });
    const app: Express = createHttpApp({ logger: base, service: 'test' });
    app.use(internalAuth('tok'));
    const handler: RouteHandler<typeof def> = async (input) => {
      seen.push({ input, locals: input.res?.locals, logger: input.body.name === 'log' ? input.logger : base });
      return { name: input.body.name };
    };
    mountRoute(app, def, handler, base);
    mountLeanRoute(app, { service: 'test', logger: base, limit: MiB }, {
      def,
      context: (req, requestId) => internalContextOf(req.headers, 'tok', requestId),
      answer: (input) => leanAnswerOf(def, handler, base, input),
    });
    app.use((_req: Request, _res: Response, next: NextFunction) => next());
    finishApp(app, base);
    http = await listen(app, 0, '127.0.0.1');
  });
  afterAll(async () => {
    await http.close();
    jest.restoreAllMocks();
  });

  /** lean: an ordinary JSON request; express: a quoted charset, which only express takes. */
  async function call(path: 'lean' | 'express', name: string, requestId: string) {
    const res = await fetch(`${http.url}/v1/input/check`, {
      method: 'POST',
      headers: {
        'x-internal-token': 'tok',
        'x-tenant-id': 't1',
        'x-environment-id': 'production',
        'x-request-id': requestId,
        'content-type': path === 'lean' ? 'application/json' : 'application/json; charset="utf-8"',
      },
      body: JSON.stringify({ name }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ name });
    return seen.at(-1)!;
  }

  it.each(['lean', 'express'] as const)('%s: the logger is made on first use, a child with the request id', async (path) => {
    children.length = 0;
    const quiet = await call(path, 'quiet', `${path}-quiet`);
    expect(children).toEqual([]);
    expect(quiet.input.ctx.requestId).toBe(`${path}-quiet`);
    const logged = await call(path, 'log', `${path}-log`);
    expect(children).toEqual([{ requestId: `${path}-log` }]);
    // Asked again, the same logger.
    expect(logged.input.logger).toBe(logged.logger);
    expect(children).toHaveLength(1);
  });

  it.each(['lean', 'express'] as const)('%s: no accessor of its own, one hidden class for every request', async (path) => {
    const a = await call(path, 'a', `${path}-a`);
    const b = await call(path, 'log', `${path}-b`);
    const c = await call(path, 'c', `${path}-c`);
    for (const { input } of [a, b, c]) {
      for (const key of Object.getOwnPropertyNames(input)) {
        expect(Object.getOwnPropertyDescriptor(input, key)).not.toHaveProperty('get');
      }
    }
    expect(haveSameMap(a.input, c.input)).toBe(true);
    if (path === 'express') {
      expect(a.locals).toBeDefined();
      for (const key of Object.getOwnPropertyNames(a.locals)) {
        expect(Object.getOwnPropertyDescriptor(a.locals, key)).not.toHaveProperty('get');
      }
      expect(haveSameMap(a.locals!, c.locals!)).toBe(true);
    }
  });
});
