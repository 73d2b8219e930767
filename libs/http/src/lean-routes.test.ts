import { request } from 'node:http';
import type { Express, NextFunction, Request, Response } from 'express';
import { z } from 'zod';
import { defineRoute } from '@billstream/contracts';
import { NotFoundError } from '@billstream/errors';
import { createLogger } from '@billstream/logger';
import { createHttpApp, finishApp, internalAuth, internalContextOf, MiB } from './app';
import { mountLeanRoute } from './lean-routes';
import { HttpResult, leanAnswerOf, mountRoute, type RouteHandler } from './routes';
import { listen, type Listening } from './server';

const logger = createLogger({ service: 'test', level: 'silent' });

const def = defineRoute({
  operationId: 'leanThing',
  method: 'post',
  path: '/v1/lean/check',
  service: 'billing',
  permission: 'plans:read',
  summary: 'x',
  tag: 'x',
  body: z.strictObject({ name: z.string().min(1), quantity: z.string().default('1') }),
  response: z.object({ name: z.string(), quantity: z.string(), tenant: z.string() }),
  status: 200,
});

/** A service app (internal token `tok`) that calls `counted` for each request express handles. */
function countingApp(counted: () => void): Express {
  const app: Express = createHttpApp({ logger, service: 'test' });
  app.use(internalAuth('tok'));
  app.use((_req: Request, _res: Response, next: NextFunction) => {
    counted();
    next();
  });
  return app;
}

/** The same route through express and through the lean path answers the same, for every outcome. */
describe('lean routes (ADR 0027): served without express, answered as express answers', () => {
  let http: Listening;
  let throughExpress = 0;

  beforeAll(async () => {
    const app = countingApp(() => (throughExpress += 1));
    const handler: RouteHandler<typeof def> = async ({ body, ctx }) => {
      if (body.name === 'missing') throw new NotFoundError('No such thing', { field: 'name' });
      if (body.name === 'tagged') return new HttpResult({ name: body.name, quantity: body.quantity, tenant: ctx.tenantId }, 200, { ETag: '"7"' });
      return { name: body.name, quantity: body.quantity, tenant: ctx.tenantId };
    };
    mountRoute(app, def, handler, logger);
    mountLeanRoute(app, { service: 'test', logger, limit: MiB }, {
      def,
      context: (req, requestId) => internalContextOf(req.headers, 'tok', requestId),
      answer: (input) => leanAnswerOf(def, handler, logger, input),
    });
    finishApp(app, logger);
    http = await listen(app, 0, '127.0.0.1');
  });
  afterAll(async () => {
    await http.close();
  });

  const HEADERS = { 'x-internal-token': 'tok', 'x-tenant-id': 't1', 'x-environment-id': 'production', 'x-request-id': 'req-1' };
  /** lean: an ordinary JSON request; express: the same with a quoted charset, which only express takes. */
  async function call(path: 'lean' | 'express', body: string, headers: Record<string, string> = HEADERS) {
    const before = throughExpress;
    const res = await fetch(`${http.url}/v1/lean/check`, {
      method: 'POST',
      headers: { ...headers, 'content-type': path === 'lean' ? 'application/json' : 'application/json; charset="utf-8"' },
      body,
    });
    const text = await res.text();
    const parsed = text ? JSON.parse(text) : undefined;
    if (parsed?.error?.details?.reference) parsed.error.details.reference = '<ref>';
    return {
      status: res.status,
      body: parsed,
      contentType: res.headers.get('content-type'),
      requestId: res.headers.get('x-request-id'),
      etag: res.headers.get('etag'),
      viaExpress: throughExpress > before,
    };
  }

  it.each([
    ['an answer', '{"name":"a"}', HEADERS],
    ['an HttpResult with headers', '{"name":"tagged","quantity":"2"}', HEADERS],
    ['the handler throws', '{"name":"missing"}', HEADERS],
    ['invalid JSON', '{"name":', HEADERS],
    ['a JSON text that is not an object', '"a"', HEADERS],
    ['a NUL in a string', '{"name":"a\\u0000b"}', HEADERS],
    ['a schema error', '{"name":"","colour":"red"}', HEADERS],
    ['no internal token', '{"name":"a"}', { 'x-tenant-id': 't1', 'x-environment-id': 'production' }],
    ['a bad request id', '{"name":"a"}', { ...HEADERS, 'x-request-id': 'bad id!' }],
  ])('%s: the same status, body and headers', async (_case, body, headers) => {
    const lean = await call('lean', body, headers);
    const viaExpress = await call('express', body, headers);
    expect(lean.viaExpress).toBe(false);
    expect(viaExpress.viaExpress || viaExpress.status === 400 || viaExpress.status === 401).toBe(true);
    const same = (r: typeof lean) => ({ ...r, viaExpress: undefined, requestId: r.requestId === 'req-1' ? 'req-1' : typeof r.requestId });
    expect(same(lean)).toEqual(same(viaExpress));
  });

  it('leaves to express (its body unread) what is not ordinary: a query string, another content type, a chunked body', async () => {
    const query = await fetch(`${http.url}/v1/lean/check?x=1`, { method: 'POST', headers: { ...HEADERS, 'content-type': 'application/json' }, body: '{"name":"a"}' });
    expect([query.status, ((await query.json()) as { error: { details: { field: string } } }).error.details.field]).toEqual([400, 'x']);
    const text = await fetch(`${http.url}/v1/lean/check`, { method: 'POST', headers: { ...HEADERS, 'content-type': 'text/plain' }, body: '{"name":"a"}' });
    expect([text.status, ((await text.json()) as { error: { details: { field: string } } }).error.details.field]).toEqual([400, 'name']);
    const before = throughExpress;
    const chunked = await fetch(`${http.url}/v1/lean/check`, {
      method: 'POST',
      headers: { ...HEADERS, 'content-type': 'application/json' },
      body: new ReadableStream({
        start(c) {
          c.enqueue(new TextEncoder().encode('{"name":"chunked"}'));
          c.close();
        },
      }),
      duplex: 'half',
    } as RequestInit);
    expect([chunked.status, await chunked.json()]).toEqual([200, { name: 'chunked', quantity: '1', tenant: 't1' }]);
    expect(throughExpress).toBe(before + 1);
  });
});

const thing = defineRoute({
  operationId: 'leanGetThing',
  method: 'get',
  path: '/v1/lean/things/:id',
  service: 'billing',
  permission: 'plans:read',
  summary: 'x',
  tag: 'x',
  params: z.object({ id: z.string().regex(/^th_[a-z0-9]+$/, 'must be a thing id') }),
  query: z.strictObject({ expand: z.enum(['owner']).optional() }),
  response: z.object({ id: z.string(), tenant: z.string(), expanded: z.boolean() }),
  status: 200,
});
const act = defineRoute({
  operationId: 'leanActOnThing',
  method: 'post',
  path: '/v1/lean/things/:id/act',
  service: 'billing',
  permission: 'plans:write',
  summary: 'x',
  tag: 'x',
  params: z.object({ id: z.string() }),
  body: z.strictObject({ amount: z.string().min(1) }),
  response: z.object({ id: z.string(), amount: z.string() }),
  status: 201,
});
const special = defineRoute({
  operationId: 'leanSpecialThing',
  method: 'get',
  path: '/v1/lean/things/special',
  service: 'billing',
  permission: 'plans:read',
  summary: 'x',
  tag: 'x',
  response: z.object({ special: z.boolean() }),
  status: 200,
});

/** Routes with parameters in their path, with and without a body (issue #34): the same answers both ways; the unusual to express. */
describe('lean routes with path parameters', () => {
  let http: Listening;
  let throughExpress = 0;

  beforeAll(async () => {
    const app = countingApp(() => (throughExpress += 1));
    // Express matches the static route first: the lean table must leave its path to express.
    mountRoute(app, special, async () => ({ special: true }), logger);
    const getThing: RouteHandler<typeof thing> = async ({ params, query, ctx }) => {
      if (params.id === 'th_missing') throw new NotFoundError('No such thing', { field: 'id' });
      return new HttpResult({ id: params.id, tenant: ctx.tenantId, expanded: query.expand === 'owner' }, 200, { ETag: '"3"' });
    };
    const actOn: RouteHandler<typeof act> = async ({ params, body }) => ({ id: params.id, amount: body.amount });
    mountRoute(app, thing, getThing, logger);
    mountRoute(app, act, actOn, logger);
    for (const [def, handler] of [
      [thing, getThing],
      [act, actOn],
    ] as const) {
      mountLeanRoute(app, { service: 'test', logger, limit: MiB }, {
        def,
        rivals: [special, thing, act],
        context: (req, requestId) => internalContextOf(req.headers, 'tok', requestId),
        answer: (input) => leanAnswerOf(def, handler as RouteHandler<typeof def>, logger, input),
      });
    }
    finishApp(app, logger);
    http = await listen(app, 0, '127.0.0.1');
  });
  afterAll(async () => {
    await http.close();
  });

  const HEADERS = { 'x-internal-token': 'tok', 'x-tenant-id': 't1', 'x-environment-id': 'production', 'x-request-id': 'req-2' };
  /** express forced by a Content-Encoding of identity (only express takes one). */
  async function call(way: 'lean' | 'express', method: string, path: string, body?: string, headers: Record<string, string> = HEADERS) {
    const before = throughExpress;
    const res = await fetch(`${http.url}${path}`, {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...(way === 'express' ? { 'content-encoding': 'identity' } : {}) },
      body,
    });
    const text = await res.text();
    const parsed = text ? JSON.parse(text) : undefined;
    if (parsed?.error?.details?.reference) parsed.error.details.reference = '<ref>';
    return { status: res.status, body: parsed, contentType: res.headers.get('content-type'), requestId: res.headers.get('x-request-id'), etag: res.headers.get('etag'), viaExpress: throughExpress > before };
  }

  it.each([
    ['a read', 'GET', '/v1/lean/things/th_1', undefined],
    ['a read the handler refuses', 'GET', '/v1/lean/things/th_missing', undefined],
    ['a parameter its schema refuses', 'GET', '/v1/lean/things/nope', undefined],
    ['a write', 'POST', '/v1/lean/things/th_1/act', '{"amount":"2.5"}'],
    ['a write with a schema error', 'POST', '/v1/lean/things/th_1/act', '{"amount":""}'],
    ['a write with invalid JSON', 'POST', '/v1/lean/things/th_1/act', '{"amount":'],
  ])('%s: the same status, body and headers', async (_case, method, path, body) => {
    const lean = await call('lean', method, path, body);
    const viaExpress = await call('express', method, path, body);
    expect(lean.viaExpress).toBe(false);
    expect(viaExpress.viaExpress || viaExpress.status === 400).toBe(true);
    expect({ ...lean, viaExpress: undefined }).toEqual({ ...viaExpress, viaExpress: undefined });
  });

  it('leaves to express what it would route elsewhere or decode: a rival static path, an encoded or odd segment, a query, a body on a read', async () => {
    const cases: Array<[string, string, string | undefined, number, unknown]> = [
      ['GET', '/v1/lean/things/special', undefined, 200, { special: true }],
      ['GET', '/v1/lean/things/th_%61b', undefined, 200, { id: 'th_ab', tenant: 't1', expanded: false }],
      ['GET', '/v1/lean/things/th_1/', undefined, 200, { id: 'th_1', tenant: 't1', expanded: false }],
      ['GET', '/v1/LEAN/things/th_1', undefined, 200, { id: 'th_1', tenant: 't1', expanded: false }],
      ['GET', '/v1/lean/things/th_1?expand=owner', undefined, 200, { id: 'th_1', tenant: 't1', expanded: true }],
      ['POST', '/v1/lean/things/th_%31/act', '{"amount":"1"}', 201, { id: 'th_1', amount: '1' }],
    ];
    for (const [method, path, body, status, answer] of cases) {
      const res = await call('lean', method, path, body);
      expect({ path, status: res.status, body: res.body, viaExpress: res.viaExpress }).toEqual({ path, status, body: answer, viaExpress: true });
    }
    // A read that carries a body (fetch sends none on a GET).
    const before = throughExpress;
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(`${http.url}/v1/lean/things/th_1`, { method: 'GET', headers: { ...HEADERS, 'content-type': 'application/json', 'content-length': '2' } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end('{}');
    });
    expect(status).toBe(200);
    expect(throughExpress).toBe(before + 1);
  });
});
