import { ALL_ROUTES, type RouteDef } from '@billstream/contracts';
import { buildOpenApiDocument } from '@billstream/gateway';
import { INTERNAL_HEADERS, MAX_JSON_DEPTH } from '@billstream/http';
import { ApiClient, type ApiResponse } from '@billstream/testing';
import { startIntegrationStack, TEST_ENVIRONMENT, TEST_TENANT, type IntegrationStack } from '../../support/stack';

/**
 * Issue #11: hostile input is a 400 in the envelope, never a 5xx. Every route of the
 * registry gets undecodable and NUL path ids, NUL, lone and reversed surrogates in every
 * string and as keys of its example body, a 5,000-level and a (limit + 1)-level nested
 * body, NUL, malformed, array-style, repeated and unknown query parameters; through the
 * gateway (real Postgres and Kafka) and straight to the owning service's own edge, as a
 * separately deployed service receives them.
 */

interface Probe {
  what: string;
  method: string;
  path: string;
  query: string;
  body?: string;
  /** The `details.field` the refusal must name; a function for long generated paths. */
  field: string | ((field: string) => boolean);
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

interface Parameter {
  name: string;
  in: string;
  example?: unknown;
  schema?: unknown;
}

const BAD_IDS = ['%', '%zz', '%00', 'a%00b', '%ff%fe', '%C0%AE', '%ED%A0%80'];
const BAD_STRINGS: Array<[string, string]> = [
  ['NUL', 'a\u0000b'],
  ['lone high surrogate', 'a\ud800'],
  ['lone low surrogate', '\udc00a'],
  ['reversed surrogate pair', '\ude00\ud83d'],
];
const DEEP_BODY = `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`;

const document = buildOpenApiDocument();
const PATH_PARAM = /:([A-Za-z_][A-Za-z0-9_]*)/g;

function toOpenApiPath(expressPath: string): string {
  return expressPath.replace(PATH_PARAM, '{$1}');
}

function pathParamNames(expressPath: string): string[] {
  return [...expressPath.matchAll(PATH_PARAM)].map((m) => m[1]);
}

function operationOf(route: RouteDef): { parameters: Parameter[]; body?: Json; rawBody: boolean } {
  const op = document.paths[toOpenApiPath(route.path)][route.method] as {
    parameters?: Parameter[];
    requestBody?: { content: Record<string, { example?: Json }> };
  };
  const content = op.requestBody?.content;
  // A raw upload (POST /v1/tasks/imports: the file is the body, any Content-Type) has no JSON body to mutate.
  return { parameters: op.parameters ?? [], body: content?.['application/json']?.example, rawBody: content !== undefined && !content['application/json'] };
}

function queryText(values: Record<string, unknown>): string {
  return Object.entries(values)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(Array.isArray(v) ? v.join(',') : String(v))}`)
    .join('&');
}

function withQuery(base: string, extra: string): string {
  return [base, extra].filter(Boolean).join('&');
}

/** Every string of a JSON value, with its dotted path. */
function strings(value: Json, path: string[] = []): Array<{ path: string[] }> {
  if (typeof value === 'string') return [{ path }];
  if (Array.isArray(value)) return value.flatMap((v, i) => strings(v, [...path, String(i)]));
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => strings(v, [...path, k]));
  return [];
}

/** Every object of a JSON value (the root included), with its dotted path. */
function objects(value: Json, path: string[] = []): Array<{ path: string[] }> {
  if (Array.isArray(value)) return value.flatMap((v, i) => objects(v, [...path, String(i)]));
  if (value && typeof value === 'object') return [{ path }, ...Object.entries(value).flatMap(([k, v]) => objects(v, [...path, k]))];
  return [];
}

function replaced(value: Json, path: string[], fn: (old: Json) => Json): Json {
  if (path.length === 0) return fn(value);
  const [head, ...rest] = path;
  if (Array.isArray(value)) return value.map((v, i) => (String(i) === head ? replaced(v, rest, fn) : v));
  const obj = value as Record<string, Json>;
  return { ...obj, [head]: replaced(obj[head], rest, fn) };
}

function nested(levels: number): Json {
  let v: Json = 'leaf';
  for (let i = 0; i < levels; i++) v = { n: v };
  return v;
}

function probesOf(route: RouteDef): Probe[] {
  const { parameters, body, rawBody } = operationOf(route);
  const pathParams = pathParamNames(route.path);
  const idOf = (name: string) => String(parameters.find((p) => p.in === 'path' && p.name === name)?.example ?? 'x');
  const pathWith = (bad?: { name: string; raw: string }) =>
    route.path.replace(PATH_PARAM, (_m, name: string) => (bad?.name === name ? bad.raw : encodeURIComponent(idOf(name))));
  const queryParams = parameters.filter((p) => p.in === 'query');
  const baseQuery = queryText(Object.fromEntries(queryParams.filter((p) => p.example !== undefined).map((p) => [p.name, p.example])));
  const method = route.method.toUpperCase();
  const path = pathWith();
  const probes: Probe[] = [];

  for (const name of pathParams) {
    for (const raw of BAD_IDS) probes.push({ what: `path ${name}=${raw}`, method, path: pathWith({ name, raw }), query: baseQuery, field: 'path' });
  }

  probes.push({ what: 'unknown query parameter', method, path, query: withQuery(baseQuery, 'zz_unknown=1'), field: 'zz_unknown' });
  probes.push({ what: 'NUL in an unknown query parameter', method, path, query: withQuery(baseQuery, 'zz=a%00'), field: 'zz' });
  for (const p of queryParams) {
    const others = queryText(Object.fromEntries(queryParams.filter((q) => q !== p && q.example !== undefined).map((q) => [q.name, q.example])));
    const isList = JSON.stringify(p.schema ?? {}).includes('"array"');
    probes.push({ what: `NUL in ${p.name}`, method, path, query: withQuery(others, `${p.name}=a%00b`), field: p.name });
    probes.push({ what: `malformed encoding in ${p.name}`, method, path, query: withQuery(others, `${p.name}=%zz`), field: p.name });
    probes.push({ what: `${p.name}[]`, method, path, query: withQuery(others, `${p.name}[]=1`), field: `${p.name}[]` });
    if (!isList) probes.push({ what: `${p.name} repeated`, method, path, query: withQuery(others, `${p.name}=1&${p.name}=2`), field: p.name });
  }

  if (rawBody) return probes;
  const example: Json = body ?? {};
  for (const { path: at } of strings(example)) {
    for (const [what, bad] of BAD_STRINGS) {
      probes.push({ what: `${what} in body ${at.join('.')}`, method, path, query: baseQuery, body: JSON.stringify(replaced(example, at, () => bad)), field: at.join('.') });
    }
  }
  for (const { path: at } of objects(example)) {
    const key = 'k\u0000';
    const mutated = replaced(example, at, (old) => ({ ...(old as Record<string, Json>), [key]: 'v' }));
    probes.push({ what: `NUL key in body ${at.join('.') || '(root)'}`, method, path, query: baseQuery, body: JSON.stringify(mutated), field: [...at, 'k\\u0000'].join('.') });
  }
  const deeper = replaced(example, [], (old) => (old && typeof old === 'object' && !Array.isArray(old) ? { ...old, deep: nested(MAX_JSON_DEPTH) } : old));
  probes.push({ what: `body nested ${MAX_JSON_DEPTH + 1} levels`, method, path, query: baseQuery, body: JSON.stringify(deeper), field: (f) => f.startsWith('deep.n.') });
  probes.push({ what: 'body nested 5,000 levels', method, path, query: baseQuery, body: DEEP_BODY, field: (f) => f.startsWith('a.a.') });
  return probes;
}

type Send = (probe: Probe) => Promise<ApiResponse>;

/** The probes that did not get a 400 `validation_error` naming the expected field, with what they got. */
async function failures(probes: Probe[], send: Send): Promise<string[]> {
  const out: string[] = [];
  const queue = [...probes];
  const worker = async () => {
    for (let probe = queue.shift(); probe; probe = queue.shift()) {
      const res = await send(probe);
      const field = (res.body as { error?: { details?: { field?: unknown } } })?.error?.details?.field;
      const fieldOk = typeof field === 'string' && (typeof probe.field === 'string' ? field === probe.field : probe.field(field));
      const envelope =
        res.body?.success === false && typeof res.body.error?.message === 'string' && res.body.error.internal_error === 'validation_error';
      if (res.status !== 400 || !envelope || !fieldOk) out.push(`${probe.what}: ${res.status} ${res.text.slice(0, 300)}`);
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  return out;
}

describe('hostile input on every route of the registry: 400 in the envelope, never 5xx (real Postgres and Kafka)', () => {
  let stack: IntegrationStack;

  beforeAll(async () => {
    stack = await startIntegrationStack();
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const sender = (client: ApiClient, headers: Record<string, string> = {}): Send => (probe) => {
    const h = probe.body === undefined ? headers : { ...headers, 'content-type': 'application/json' };
    return client.call(probe.method, `${probe.path}${probe.query ? `?${probe.query}` : ''}`, probe.body, h);
  };

  it('has probes for every route', () => {
    for (const route of ALL_ROUTES) expect(probesOf(route).length).toBeGreaterThan(3);
  });

  it.each(ALL_ROUTES.map((r) => [`${r.method.toUpperCase()} ${r.path}`, r] as const))('%s through the gateway', async (_name, route) => {
    expect(await failures(probesOf(route), sender(stack.api))).toEqual([]);
  });

  it.each(ALL_ROUTES.filter((r) => r.service !== 'gateway').map((r) => [`${r.method.toUpperCase()} ${r.path}`, r] as const))(
    "%s straight to its service's own edge",
    async (_name, route) => {
      const { urls, internalToken } = stack.embedded.services;
      const direct = sender(new ApiClient(urls[route.service] as string), {
        [INTERNAL_HEADERS.token]: internalToken,
        [INTERNAL_HEADERS.tenant]: TEST_TENANT,
        [INTERNAL_HEADERS.environment]: TEST_ENVIRONMENT,
      });
      expect(await failures(probesOf(route), direct)).toEqual([]);
    },
  );
});
