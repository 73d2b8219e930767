import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import { z } from 'zod';
import { defineRoute } from '@billstream/contracts';
import { createLogger } from '@billstream/logger';
import { HttpResult, mountRoute, type RouteHandler } from './routes';
import { listen } from './server';

const logger = createLogger({ service: 'test', level: 'silent' });

const getThing = defineRoute({
  operationId: 'getThing',
  method: 'get',
  path: '/v1/things/:id',
  service: 'customer',
  permission: 'customers:read',
  summary: 'Read a thing',
  tag: 'Things',
  params: z.strictObject({ id: z.string() }),
  response: z.strictObject({ id: z.string(), size: z.number(), note: z.string().nullable() }),
  status: 200,
});

const deleteThing = defineRoute({
  operationId: 'deleteThing',
  method: 'delete',
  path: '/v1/things/:id',
  service: 'customer',
  permission: 'customers:write',
  summary: 'Delete a thing',
  tag: 'Things',
  params: z.strictObject({ id: z.string() }),
  status: 204,
});

/** An app with a request context, as the internal auth sets it, and one route mounted. */
function appWith<D extends Parameters<typeof mountRoute>[1]>(def: D, handler: RouteHandler<D>): Express {
  const app = express();
  app.use((_req: Request, res: Response, next: NextFunction) => {
    res.locals.ctx = { tenantId: 't', environmentId: 'e', actor: 'a', requestId: 'r' };
    next();
  });
  mountRoute(app, def, handler, logger);
  return app;
}

describe("a handler's return type is the route's response schema", () => {
  it('answers with the body a well-typed handler returns, or its HttpResult', async () => {
    const app = appWith(getThing, async ({ params }) =>
      params.id === 'tagged' ? new HttpResult({ id: params.id, size: 2, note: null }, 200, { ETag: '"2"' }) : { id: params.id, size: 1, note: 'x' },
    );
    const http = await listen(app, 0, '127.0.0.1');
    try {
      const plain = await fetch(`${http.url}/v1/things/a`);
      expect(await plain.json()).toEqual({ id: 'a', size: 1, note: 'x' });
      const tagged = await fetch(`${http.url}/v1/things/tagged`);
      expect(tagged.headers.get('etag')).toBe('"2"');
      expect(await tagged.json()).toEqual({ id: 'tagged', size: 2, note: null });
    } finally {
      await http.close();
    }
  });

  it('answers 204 with no body for a route without a response schema', async () => {
    const http = await listen(appWith(deleteThing, async () => undefined), 0, '127.0.0.1');
    try {
      const res = await fetch(`${http.url}/v1/things/a`, { method: 'DELETE' });
      expect(res.status).toBe(204);
      expect(await res.text()).toBe('');
    } finally {
      await http.close();
    }
  });

  it('refuses, at compile time, a body of another shape (typecheck runs over this file)', () => {
    const wrongType: RouteHandler<typeof getThing> =
      // @ts-expect-error size must be a number
      async ({ params }) => ({ id: params.id, size: '1', note: null });
    const missingField: RouteHandler<typeof getThing> =
      // @ts-expect-error note is required (nullable, not optional)
      async ({ params }) => ({ id: params.id, size: 1 });
    const wrongResult: RouteHandler<typeof getThing> =
      // @ts-expect-error the HttpResult's body is checked the same way
      async ({ params }) => new HttpResult({ id: params.id, name: 'x' }, 200);
    const untypedResult: RouteHandler<typeof getThing> =
      // @ts-expect-error an HttpResult of unknown body does not pass either
      async () => new HttpResult(JSON.parse('{}') as unknown);
    const bodyOnNoContent: RouteHandler<typeof deleteThing> =
      // @ts-expect-error a route without a response schema answers nothing
      async () => ({ deleted: true });
    const noContent: RouteHandler<typeof deleteThing> = async () => undefined;
    for (const handler of [wrongType, missingField, wrongResult, untypedResult, bodyOnNoContent, noContent]) {
      expect(typeof handler).toBe('function');
    }
  });
});
