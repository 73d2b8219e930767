import type { z } from 'zod';
import type { RouteDef } from '@billstream/contracts';
import { IDEMPOTENCY_KEY_HEADER, takesIdempotencyKey } from '@billstream/http';
import { errorResponses, type RequestExamples } from './errors';
import { exampleFor, type ExampleContext } from './examples';
import { metaExamples, toJsonSchema, type JsonSchema, type SchemaComponents } from './json-schema';
import { paramIdPrefix, pathParamNames, resultIdPrefix } from './paths';

const SECURITY = [{ bearerAuth: [] }, { apiKeyHeader: [] }];

/** Optimistic locking: a stale ETag gives 409 `version_conflict`; without the header the update is unconditional. */
const IF_MATCH = {
  name: 'If-Match',
  in: 'header',
  required: false,
  description: 'The ETag of the version you read (e.g. `"3"`), or `*`; a stale one gives 409 `version_conflict`',
  schema: { type: 'string' },
  example: '"3"',
};

/** The body's `idempotency_key` as a header (ADR 0035): either or both, equal; different gives 400. */
const IDEMPOTENCY_KEY = {
  name: IDEMPOTENCY_KEY_HEADER,
  in: 'header',
  required: false,
  description: 'The same as the body field `idempotency_key` (same rules); send either or both, and when both, the same key (else 400)',
  schema: { type: 'string', minLength: 1, maxLength: 255 },
  example: 'topup-2026-01-15-0001',
};

const REQUEST_ID_HEADER = { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } };

function accepts(schema: z.ZodType, value: unknown): boolean {
  return schema.safeParse(value).success;
}

/**
 * An example a client can send: `.meta({ examples })` when the schema has one, else a
 * full example generated from the JSON schema, else a minimal one; the one chosen is the
 * first the zod schema accepts.
 */
function requestExample(zod: z.ZodType, json: JsonSchema, ctx: ExampleContext): unknown {
  const candidates = [...(metaExamples(zod) ?? []), exampleFor(json, ctx), exampleFor(json, { ...ctx, requiredOnly: true })];
  return candidates.find((c) => accepts(zod, c)) ?? candidates[0];
}

function responseExample(zod: z.ZodType, json: JsonSchema, ctx: ExampleContext): unknown {
  return metaExamples(zod)?.[0] ?? exampleFor(json, ctx);
}

function objectProperties(schema: JsonSchema, components: SchemaComponents): { properties: Record<string, JsonSchema>; required: string[] } {
  const resolved = components.resolve(schema);
  const branches = [resolved, ...((resolved.allOf ?? []) as JsonSchema[])].map((s) => components.resolve(s));
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const branch of branches) {
    Object.assign(properties, branch.properties ?? {});
    required.push(...((branch.required ?? []) as string[]));
  }
  return { properties, required };
}

function parameters(route: RouteDef, where: 'path' | 'query', zod: z.ZodType, example: unknown, components: SchemaComponents) {
  const { properties, required } = objectProperties(toJsonSchema(zod, 'input', components), components);
  const values = (example ?? {}) as Record<string, unknown>;
  const names = where === 'path' ? pathParamNames(route.path) : Object.keys(properties);
  return names.map((name) => {
    const schema = properties[name] ?? { type: 'string' };
    const parameter: Record<string, unknown> = {
      name,
      in: where,
      required: where === 'path' || required.includes(name),
      schema,
    };
    if (typeof schema.description === 'string') parameter.description = schema.description;
    if (values[name] !== undefined) parameter.example = values[name];
    if (where === 'query' && components.resolve(schema).anyOf) {
      parameter.description = parameter.description ?? 'Comma-separated values, or the parameter repeated';
    }
    return parameter;
  });
}

/** One OpenAPI operation of a route: parameters, body, success and error responses, examples. */
export function buildOperation(route: RouteDef, components: SchemaComponents): Record<string, unknown> {
  const ctx: ExampleContext = { components, resultPrefix: resultIdPrefix(route.path) };
  const examples: RequestExamples = {};
  const operation: Record<string, unknown> = {
    operationId: route.operationId,
    summary: route.summary,
    description: describe(route),
    tags: [route.tag],
    security: route.signedLink || route.portal === 'link' ? [] : route.portal === 'token' ? [{ portalToken: [] }] : SECURITY,
    ...(route.portal ? {} : { 'x-billstream-permission': route.permission }),
    'x-billstream-service': route.service,
  };

  const params: unknown[] = [];
  if (route.params) {
    const json = toJsonSchema(route.params, 'input', components);
    const paramCtx = (name: string): ExampleContext => ({ ...ctx, resultPrefix: paramIdPrefix(route.path, name) ?? ctx.resultPrefix });
    const { properties } = objectProperties(json, components);
    const fromNames = Object.fromEntries(
      pathParamNames(route.path).map((name) => [name, exampleFor(properties[name] ?? { type: 'string' }, paramCtx(name), name)]),
    );
    examples.params = [...(metaExamples(route.params) ?? []), fromNames].find((c) => accepts(route.params as z.ZodType, c)) ?? fromNames;
    params.push(...parameters(route, 'path', route.params, examples.params, components));
  } else {
    params.push(
      ...pathParamNames(route.path).map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } })),
    );
  }
  if (route.query) {
    examples.query = requestExample(route.query, toJsonSchema(route.query, 'input', components), ctx);
    params.push(...parameters(route, 'query', route.query, examples.query, components));
  }
  if (route.method === 'put' || route.method === 'patch') params.push(IF_MATCH);
  if (takesIdempotencyKey(route)) params.push(IDEMPOTENCY_KEY);
  if (params.length > 0) operation.parameters = params;

  if (route.body) {
    const schema = toJsonSchema(route.body, 'input', components);
    examples.body = requestExample(route.body, schema, ctx);
    examples.bodyFields = Object.keys(objectProperties(schema, components).properties);
    operation.requestBody = { required: true, content: { 'application/json': { schema, example: examples.body } } };
  }
  if (route.rawBody) {
    // A file as the raw body (any Content-Type; CSV and JSONL shown), never parsed as JSON.
    const file = { schema: { type: 'string', format: 'binary', maxLength: route.rawBody.maxBytes } };
    operation.requestBody = {
      required: true,
      description: `The file itself, up to ${route.rawBody.maxBytes} bytes (413 beyond); any Content-Type is accepted`,
      content: { 'text/csv': file, 'application/x-ndjson': file, '*/*': file },
    };
  }

  const success: Record<string, unknown> = { description: successDescription(route.status), headers: REQUEST_ID_HEADER };
  if (route.status !== 204) {
    const schema = route.response ? toJsonSchema(route.response, 'output', components) : {};
    const content: Record<string, unknown> = { schema };
    if (route.response) content.example = responseExample(route.response, schema, ctx);
    success.content = route.streamsResponse
      ? Object.fromEntries(route.streamsResponse.contentTypes.map((t) => [t, { schema: { type: 'string', format: 'binary' } }]))
      : { 'application/json': content };
  }
  operation.responses = { [String(route.status)]: success, ...errorResponses(route, examples) };
  return operation;
}

function describe(route: RouteDef): string {
  if (route.signedLink) return `No API key: the \`token\` of a signed link opens the one resource it was signed for (a wrong token: 401). Served by the ${route.service} service.`;
  if (route.portal === 'token') {
    return "The customer portal's API: a portal session's token, never an API key (401 when it is unknown, expired or revoked). Read only; it answers only the records of the session's customer and its descendants (any other id: 404). Answered by the gateway from the owners' routes.";
  }
  if (route.portal === 'link') return 'No API key and no portal token: the signed link of an invoice email opens a new one-hour session of its customer. Answered by the gateway.';
  return `Needs the \`${route.permission}\` permission (or \`*\`). Served by the ${route.service} service.`;
}

function successDescription(status: number): string {
  switch (status) {
    case 201:
      return 'Created';
    case 202:
      return 'Accepted: durably queued, processed asynchronously';
    case 204:
      return 'Done; empty body';
    default:
      return 'OK';
  }
}
