import { ALL_ROUTES, errorEnvelopeSchema, PORTAL_API_ROUTES, type RouteDef } from '@billstream/contracts';
import { buildOperation } from './operation';
import { SchemaComponents, toJsonSchema } from './json-schema';
import { toOpenApiPath } from './paths';

export const OPENAPI_PATH = '/v1/openapi.json';

export type OpenApiDocument = Record<string, unknown> & { paths: Record<string, Record<string, Record<string, unknown>>> };

const DESCRIPTION = [
  'Usage-based billing: customers, credit wallets, metered usage events and signed webhooks.',
  '',
  'Authenticate with `Authorization: Bearer <key>` or `X-API-Key: <key>` (Bearer wins when both are sent).',
  'Every error uses one envelope: `{"success": false, "error": {"message", "internal_error", "details"?}}`;',
  'the event ingestion endpoints add a top-level `hint`. Decimal amounts are strings; timestamps are ISO 8601 UTC.',
  'This document is generated from the route registry (`libs/contracts`); see docs/api.md for the decisions behind it.',
].join('\n');

function unauthenticatedGet(operationId: string, summary: string, tag: string, body: Record<string, unknown>, example: unknown) {
  return {
    get: {
      operationId,
      summary,
      tags: [tag],
      security: [],
      responses: { '200': { description: 'OK', content: { 'application/json': { schema: body, example } } } },
    },
  };
}

function healthPaths(): OpenApiDocument['paths'] {
  const readiness = {
    type: 'object',
    properties: { status: { type: 'string', enum: ['ready', 'not_ready'] }, checks: { type: 'object', additionalProperties: { type: 'boolean' } } },
    required: ['status', 'checks'],
  };
  const readyz = unauthenticatedGet('readiness', 'Ready: the database and the broker are reachable (503 when not)', 'Health', readiness, {
    status: 'ready',
    checks: { database: true, broker: true },
  });
  (readyz.get.responses as Record<string, unknown>)['503'] = {
    description: 'Not ready',
    content: { 'application/json': { schema: readiness, example: { status: 'not_ready', checks: { database: true, broker: false } } } },
  };
  return {
    '/healthz': unauthenticatedGet(
      'liveness',
      'Alive: the process is up',
      'Health',
      { type: 'object', properties: { status: { const: 'ok' } }, required: ['status'] },
      { status: 'ok' },
    ),
    '/readyz': readyz,
    [OPENAPI_PATH]: unauthenticatedGet('getOpenApiDocument', 'This OpenAPI document', 'Meta', { type: 'object' }, { openapi: '3.1.0' }),
  };
}

/**
 * The OpenAPI 3.1 document of the public API, generated from the route registry: every
 * route with its method, path, permission, parameters, body, success response and the
 * errors it documents, each with examples. Deterministic: the same routes give the same bytes.
 */
export function buildOpenApiDocument(routes: RouteDef[] = [...ALL_ROUTES, ...PORTAL_API_ROUTES]): OpenApiDocument {
  const components = new SchemaComponents();
  components.register('ErrorEnvelope', toJsonSchema(errorEnvelopeSchema, 'output', components), 'output');
  const paths: OpenApiDocument['paths'] = {};
  const tags: string[] = [];
  for (const route of routes) {
    const path = toOpenApiPath(route.path);
    const item = (paths[path] ??= {});
    if (item[route.method]) throw new Error(`two routes for ${route.method.toUpperCase()} ${path}`);
    item[route.method] = buildOperation(route, components);
    if (!tags.includes(route.tag)) tags.push(route.tag);
  }
  Object.assign(paths, healthPaths());
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://spec.openapis.org/oas/3.1/dialect/base',
    info: {
      title: 'Billstream API',
      version: '1.0.0',
      description: DESCRIPTION,
      license: { name: 'Proprietary' },
    },
    servers: [{ url: 'http://localhost:8080', description: 'Local: `npm start` or `docker compose up`' }],
    tags: [...tags, 'Health', 'Meta'].map((name) => ({ name })),
    paths,
    components: {
      schemas: components.schemas,
      headers: {
        'Retry-After': { description: 'Whole seconds to wait before retrying', schema: { type: 'integer', minimum: 1 } },
        'X-Request-Id': { description: 'The request id (yours when you sent a valid one); it appears in every log line of the request', schema: { type: 'string' } },
      },
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API key as `Authorization: Bearer <key>`' },
        apiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'An API key as `X-API-Key: <key>`' },
        portalToken: { type: 'http', scheme: 'bearer', description: "A portal session's token (`bsp_...`, from the fragment of the session's `url`) as `Authorization: Bearer <token>`: the portal API only" },
      },
    },
  };
}
