import { z } from 'zod';
import { ALL_ROUTES, defineRoute, walletInternalApi, type RouteDef } from '@billstream/contracts';
import { buildOpenApiDocument, type OpenApiDocument } from './document';
import { pathParamNames, toOpenApiPath } from './paths';

type Operation = Record<string, any>;

function operationOf(doc: OpenApiDocument, route: RouteDef): Operation {
  return doc.paths[toOpenApiPath(route.path)]?.[route.method] as Operation;
}

function refsIn(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) value.forEach((v) => refsIn(v, out));
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' && typeof v === 'string') out.push(v);
      else refsIn(v, out);
    }
  }
  return out;
}

function resolvePointer(doc: unknown, ref: string): unknown {
  return ref
    .slice(2)
    .split('/')
    .reduce<unknown>((node, part) => (node as Record<string, unknown> | undefined)?.[part], doc);
}

describe('OpenAPI document generated from the route registry', () => {
  const doc = buildOpenApiDocument();

  it('is an OpenAPI 3.1 document that serves itself without authentication', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.paths['/v1/openapi.json'].get.security).toEqual([]);
    expect(Object.keys(doc.paths['/healthz'])).toEqual(['get']);
  });

  it('leaves out the internal routes (service to service): they are not in ALL_ROUTES, so the gateway does not route them', () => {
    const internal = Object.values(walletInternalApi) as RouteDef[];
    expect(internal.length).toBeGreaterThan(0);
    for (const route of internal) {
      expect(route.path.startsWith('/internal/')).toBe(true);
      expect(ALL_ROUTES.map((r) => r.operationId)).not.toContain(route.operationId);
    }
    expect(ALL_ROUTES.filter((r) => !r.path.startsWith('/v1/'))).toEqual([]);
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/internal'))).toEqual([]);
  });

  it('has every route of ALL_ROUTES with its method, OpenAPI path, security, success status and errors', () => {
    expect(ALL_ROUTES.length).toBeGreaterThan(0);
    for (const route of ALL_ROUTES) {
      const op = operationOf(doc, route);
      expect({ route: route.operationId, found: Boolean(op) }).toEqual({ route: route.operationId, found: true });
      expect(op.operationId).toBe(route.operationId);
      expect(op.tags).toEqual([route.tag]);
      expect(op.security).toEqual(route.signedLink ? [] : [{ bearerAuth: [] }, { apiKeyHeader: [] }]);
      expect(op['x-billstream-permission']).toBe(route.permission);
      const statuses = Object.keys(op.responses);
      const expected = ['400', '401', '403', '429', '500', ...(route.errors ?? []).map(String)];
      if (pathParamNames(route.path).length > 0) expected.push('404');
      expect(statuses).toEqual(expect.arrayContaining([String(route.status), ...expected]));
      const path = toOpenApiPath(route.path);
      expect(path).not.toContain(':');
      for (const name of pathParamNames(route.path)) {
        expect(path).toContain(`{${name}}`);
        expect(op.parameters).toEqual(expect.arrayContaining([expect.objectContaining({ name, in: 'path', required: true })]));
      }
    }
  });

  it('gives every error response an example body in the envelope, with hint on ingestion paths', () => {
    for (const route of ALL_ROUTES) {
      const op = operationOf(doc, route);
      for (const [status, response] of Object.entries(op.responses as Record<string, any>)) {
        if (Number(status) < 400) continue;
        const content = response.content['application/json'];
        expect(content.schema).toEqual({ $ref: '#/components/schemas/ErrorEnvelope' });
        const examples = Object.values(content.examples as Record<string, { value: any }>);
        expect(examples.length).toBeGreaterThan(0);
        for (const { value } of examples) {
          expect(value.success).toBe(false);
          expect(typeof value.error.message).toBe('string');
          expect(typeof value.error.internal_error).toBe('string');
          expect(typeof value.hint === 'string').toBe(route.path.startsWith('/v1/events'));
        }
      }
      expect(op.responses['429'].headers['Retry-After']).toBeDefined();
      const badRequest = Object.values(op.responses['400'].content['application/json'].examples as Record<string, { value: any }>)[0].value;
      expect(badRequest.error.internal_error).toBe('validation_error');
    }
  });

  it('says that an ingestion 503 is not a "no": not known to be stored, retry with the same event ids', () => {
    for (const operationId of ['ingestEvent', 'ingestEventsBulk']) {
      const route = ALL_ROUTES.find((r) => r.operationId === operationId) as RouteDef;
      const unavailable = operationOf(doc, route).responses['503'];
      expect(unavailable.description).toContain('**not known to be stored**');
      expect(unavailable.description).toContain('same `event_id` values');
      const example = Object.values(unavailable.content['application/json'].examples as Record<string, { value: any }>)[0].value;
      expect(example.error.details.event_ids).toHaveLength(1);
      expect(example.hint).toContain('not known to be stored');
    }
    const other = operationOf(doc, ALL_ROUTES.find((r) => r.operationId === 'queryEvents') as RouteDef).responses['503'];
    expect(other.description).not.toContain('not known to be stored');
  });

  it('gives request examples that the route schemas accept, and a success example for each body', () => {
    for (const route of ALL_ROUTES) {
      const op = operationOf(doc, route);
      if (route.body) {
        const example = op.requestBody.content['application/json'].example;
        expect({ route: route.operationId, ok: route.body.safeParse(example).success }).toEqual({ route: route.operationId, ok: true });
      }
      if (route.query) {
        const query = Object.fromEntries(((op.parameters ?? []) as Operation[]).filter((p) => p.in === 'query' && p.example !== undefined).map((p) => [p.name, p.example]));
        expect({ route: route.operationId, ok: route.query.safeParse(query).success }).toEqual({ route: route.operationId, ok: true });
      }
      if (route.status !== 204 && route.response) {
        expect(op.responses[String(route.status)].content['application/json'].example).toBeDefined();
      }
    }
  });

  it('gives every operation what OpenAPI requires: response descriptions, parameter names, places and schemas', () => {
    for (const item of Object.values(doc.paths)) {
      for (const op of Object.values(item) as Operation[]) {
        for (const response of Object.values(op.responses as Record<string, Operation>)) expect(typeof response.description).toBe('string');
        for (const p of (op.parameters ?? []) as Operation[]) {
          expect(p).toEqual(expect.objectContaining({ name: expect.any(String), in: expect.stringMatching(/^(path|query|header)$/), schema: expect.any(Object) }));
        }
        for (const tag of op.tags as string[]) expect((doc.tags as Array<{ name: string }>).map((t) => t.name)).toContain(tag);
      }
    }
  });

  it('resolves every $ref inside the document', () => {
    for (const ref of refsIn(doc)) expect({ ref, found: resolvePointer(doc, ref) !== undefined }).toEqual({ ref, found: true });
  });

  it('is deterministic', () => {
    expect(JSON.stringify(buildOpenApiDocument())).toBe(JSON.stringify(doc));
  });

  describe('on a route of its own', () => {
    const money = z.string().regex(/^\d+(\.\d+)?$/).meta({ id: 'Money' });
    const route = defineRoute({
      operationId: 'chargeThing',
      method: 'post',
      path: '/v1/things/:thing_id/charges',
      service: 'wallet',
      permission: 'wallets:write',
      summary: 'Charge a thing',
      tag: 'Things',
      params: z.strictObject({ thing_id: z.string() }),
      query: z.strictObject({ dry_run: z.enum(['true', 'false']).optional() }),
      body: z
        .strictObject({ amount: money, note: z.string().optional(), idempotency_key: z.string().optional() })
        .meta({ examples: [{ amount: '12.50', note: 'from meta' }] }),
      response: z.object({ id: z.string(), amount: money }),
      status: 201,
      errors: [409],
    });
    const own = buildOpenApiDocument([route]);
    const op = own.paths['/v1/things/{thing_id}/charges'].post as Operation;

    it('takes the body example from .meta({ examples })', () => {
      expect(op.requestBody.content['application/json'].example).toEqual({ amount: '12.50', note: 'from meta' });
    });

    it('names schemas with a meta id in components and refers to them', () => {
      expect((own.components as any).schemas.Money).toEqual({ type: 'string', pattern: '^\\d+(\\.\\d+)?$' });
      expect(op.requestBody.content['application/json'].schema.properties.amount).toEqual({ $ref: '#/components/schemas/Money' });
    });

    it('documents 404 for the path parameter, 413 for the body, 503 for a forwarded route and the route conflicts', () => {
      expect(Object.keys(op.responses)).toEqual(['201', '400', '401', '403', '404', '409', '413', '429', '500', '503']);
      const conflicts = op.responses['409'].content['application/json'].examples;
      expect(Object.keys(conflicts)).toEqual(['already_exists', 'idempotency_conflict']);
      expect(conflicts.idempotency_conflict.value.error.internal_error).toBe('idempotency_conflict');
    });

    it('shows the validation error the route really gives, naming the field', () => {
      const value = op.responses['400'].content['application/json'].examples.validation_error.value;
      expect(value.error).toMatchObject({ internal_error: 'validation_error', details: { field: 'amount' } });
    });

    it('hides internals of 500 behind a fixed log reference', () => {
      const value = op.responses['500'].content['application/json'].examples.internal_error.value;
      expect(value.error.message).toBe('Internal error (reference 01JDQ8Z6Y4K2M9N3P5R7T9V1X3)');
    });

    it('documents If-Match and 409 version_conflict on updates', () => {
      const update = defineRoute({ ...route, operationId: 'updateThing', method: 'patch', path: '/v1/things/:thing_id', errors: undefined });
      const patch = buildOpenApiDocument([update]).paths['/v1/things/{thing_id}'].patch as Operation;
      expect(patch.parameters).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'If-Match', in: 'header', required: false })]));
      const conflicts = patch.responses['409'].content['application/json'].examples;
      expect(Object.keys(conflicts)).toEqual(['version_conflict', 'idempotency_conflict']);
      expect(conflicts.version_conflict.value.error.internal_error).toBe('version_conflict');
    });

    it('refuses two routes on one method and path', () => {
      expect(() => buildOpenApiDocument([route, route])).toThrow('two routes for POST /v1/things/{thing_id}/charges');
    });
  });
});
