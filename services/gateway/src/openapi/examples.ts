import type { JsonSchema, SchemaComponents } from './json-schema';

/** What an example is made for: the route's id prefixes and the named schemas. */
export interface ExampleContext {
  components: SchemaComponents;
  /** Id prefix of the record the route returns (`cust_`, `wtxn_`, ...). */
  resultPrefix?: string;
  /** Leave out optional properties (a minimal example). */
  requiredOnly?: boolean;
}

const SAMPLE_ULID = '01JDQ8Z6Y4K2M9N3P5R7T9V1X3';
const SAMPLE_TIME = '2026-01-15T10:30:00Z';
const SAMPLE_FUTURE = '2030-12-31T23:59:59Z';
export const SAMPLE_UUID = '5f0c8e2a-3b1d-4c6e-9a7f-2d4b6c8e0a1f';

/** Id prefixes by the property that holds the id, or by the object key above an `id`. */
const ID_PREFIX_BY_NAME: Record<string, string> = {
  customer: 'cust_',
  customers: 'cust_',
  parent_customer: 'cust_',
  customer_id: 'cust_',
  parent_customer_id: 'cust_',
  wallet: 'wallet_',
  wallets: 'wallet_',
  wallet_id: 'wallet_',
  transaction: 'wtxn_',
  transactions: 'wtxn_',
  transaction_id: 'wtxn_',
  txn_id: 'wtxn_',
  endpoint: 'we_',
  endpoint_id: 'we_',
  webhook_endpoint_id: 'we_',
  delivery: 'whd_',
  deliveries: 'whd_',
  delivery_id: 'whd_',
  meter: 'meter_',
  meters: 'meter_',
  meter_id: 'meter_',
  key_id: 'key_',
  plan: 'plan_',
  plans: 'plan_',
  plan_id: 'plan_',
  price: 'price_',
  prices: 'price_',
  price_id: 'price_',
  subscription: 'sub_',
  subscriptions: 'sub_',
  subscription_id: 'sub_',
  user_id: 'key_',
  reservation: 'resv_',
  reservations: 'resv_',
  reservation_id: 'resv_',
};

/** Plain samples by property name, tried before generic ones. */
const STRING_SAMPLES: Record<string, string> = {
  name: 'Acme Corp',
  email: 'billing@acme.example',
  external_customer_id: 'acme-42',
  external_id: 'acme-42',
  event_name: 'api_request',
  description: 'Monthly prepaid credits',
  currency: 'usd',
  url: 'https://example.com/webhooks/billstream',
  secret: 'whsec_4f9d2c7a1b8e6f3d5a0c9b7e2d4f6a8c',
  key: 'bsk_live_Zm9vYmFyYmF6cXV4cXV1eDEyMzQ1Njc4',
  key_prefix: 'bsk_live_Zm9v',
  tenant_id: 'default',
  environment_id: 'production',
  address_line1: '1 Market Street',
  address_line2: 'Suite 400',
  address_city: 'San Francisco',
  address_state: 'CA',
  address_postal_code: '94105',
  address_country: 'US',
  source: 'api-server',
  message: 'Event accepted for processing',
  idempotency_key: 'req-2026-01-15-0001',
  // Wallet amounts that add up: balance = credit_balance x conversion_rate (1).
  balance: '600',
  credit_balance: '600',
  real_time_balance: '600',
  real_time_credit_balance: '600',
  credit_balance_before: '500',
  credit_balance_after: '600',
  credit_amount: '100',
  amount: '100',
  credits_available: '100',
  credits_to_add: '100',
  credits: '25',
  initial_credits_to_load: '500',
  purchased: '400',
  free: '200',
  field: 'tokens',
  key_name: 'tokens',
  error: 'connect ECONNREFUSED',
};

/** Samples that depend on where the property is: the object above it, or the record the route returns. */
const CONTEXT_SAMPLES: Record<string, string> = {
  'filters.key': 'region',
  'filters.values': 'eu-west-1',
  'meter_.name': 'Tokens per customer',
  'meter_.event_name': 'api_request',
  'key_.name': 'backend-production',
  'we_.description': 'Production billing events',
  'we_.event_name': 'customer.created',
  'we_.events': 'customer.created',
  'whd_.event_name': 'customer.created',
  'whd_.error': 'connect ECONNREFUSED',
  'key_.permissions': '*',
  'critical.threshold': '50',
  'warning.threshold': '200',
  'info.threshold': '400',
  'auto_topup.threshold': '100',
  'auto_topup.amount': '500',
};

const NULL_PREFERRED = new Set(['revoked_at', 'parent_customer_id', 'parent_customer', 'error', 'retry_at', 'address_line2', 'expiry_date']);

const NUMBER_SAMPLES: Record<string, number> = {
  priority: 1,
  limit: 50,
  offset: 0,
  page_size: 50,
  total: 1,
  total_count: 1,
  response_code: 200,
  attempt: 1,
  duration_ms: 84,
  value: 1200,
  total_events: 5000,
  consumer_lag: 0,
};

function timestampFor(name: string): string {
  if (name.includes('expir') || name === 'retry_at') return SAMPLE_FUTURE;
  if (name === 'end_time' || name === 'timestamp_lt' || name === 'end') return '2026-02-01T00:00:00Z';
  if (name === 'start_time' || name === 'timestamp_gte' || name === 'start') return '2026-01-01T00:00:00Z';
  return SAMPLE_TIME;
}

function idFor(plainName: string, parents: string[], ctx: ExampleContext): string | undefined {
  const name = plainName.endsWith('_ids') ? plainName.slice(0, -1) : plainName;
  if (name === 'event_id') return parents.includes('events') || ctx.resultPrefix === '' ? SAMPLE_UUID : `evt_${SAMPLE_ULID}`;
  if (name in ID_PREFIX_BY_NAME && (name.endsWith('_id') || name === 'id')) return `${ID_PREFIX_BY_NAME[name]}${SAMPLE_ULID}`;
  if (name !== 'id') return undefined;
  for (const parent of [...parents].reverse()) {
    if (parent === 'events') return SAMPLE_UUID;
    const prefix = ID_PREFIX_BY_NAME[parent];
    if (prefix) return `${prefix}${SAMPLE_ULID}`;
  }
  if (ctx.resultPrefix === '') return SAMPLE_UUID;
  return `${ctx.resultPrefix ?? ''}${SAMPLE_ULID}`;
}

function fitLength(value: string, schema: JsonSchema): string {
  const min = typeof schema.minLength === 'number' ? schema.minLength : 0;
  const max = typeof schema.maxLength === 'number' ? schema.maxLength : Infinity;
  let out = value.length > max ? value.slice(0, max) : value;
  while (out.length < min) out += 'x';
  return out;
}

function stringExample(schema: JsonSchema, name: string, parents: string[], ctx: ExampleContext): string {
  const candidates: string[] = [];
  const id = idFor(name, parents, ctx);
  if (id) candidates.push(id);
  const parent = parents[parents.length - 1] ?? '';
  for (const key of [`${parent}.${name}`, `${ctx.resultPrefix ?? ''}.${name}`]) {
    if (key in CONTEXT_SAMPLES) candidates.push(CONTEXT_SAMPLES[key]);
  }
  if (name in STRING_SAMPLES) candidates.push(STRING_SAMPLES[name]);
  if (name.endsWith('_ids') && name.slice(0, -1) in STRING_SAMPLES) candidates.push(STRING_SAMPLES[name.slice(0, -1)]);
  if (name === 'event_ids') candidates.push(SAMPLE_UUID);
  const format = schema.format;
  if (format === 'email') candidates.push('billing@acme.example');
  if (format === 'uri' || format === 'url') candidates.push('https://example.com/webhooks/billstream');
  if (format === 'uuid') candidates.push(SAMPLE_UUID);
  if (format === 'date') candidates.push(SAMPLE_TIME.slice(0, 10));
  if (format === 'date-time' || /(_at$|_time$|_date$|_utc$|timestamp|^start$|^end$)/.test(name)) candidates.push(timestampFor(name));
  if (/rate$/.test(name)) candidates.push('1');
  candidates.push('100', timestampFor(name), 'example', 'usd', 'ok');
  const pattern = typeof schema.pattern === 'string' ? new RegExp(schema.pattern) : undefined;
  const fitting = candidates.map((c) => fitLength(c, schema));
  return fitting.find((c) => !pattern || pattern.test(c)) ?? fitting[0];
}

function numberExample(schema: JsonSchema, name: string): number {
  let value = NUMBER_SAMPLES[name] ?? (schema.type === 'integer' ? 1 : 1.5);
  if (typeof schema.minimum === 'number' && value < schema.minimum) value = schema.minimum;
  if (typeof schema.exclusiveMinimum === 'number' && value <= schema.exclusiveMinimum) value = schema.exclusiveMinimum + 1;
  if (typeof schema.maximum === 'number' && value > schema.maximum) value = schema.maximum;
  return value;
}

const USAGE_PROPERTIES = { tokens: 1200, model: 'standard', region: 'eu-west-1' };

function freeFormObject(name: string): Record<string, unknown> {
  if (name === 'metadata') return { plan: 'pro' };
  if (name === 'properties') return USAGE_PROPERTIES;
  // Bulk bodies whose items are checked one by one (to report their index) are free-form here.
  if (name === 'events') {
    return { event_name: 'api_request', external_customer_id: 'acme-42', timestamp: SAMPLE_TIME, event_id: SAMPLE_UUID, properties: USAGE_PROPERTIES };
  }
  return {};
}

function pickBranch(branches: JsonSchema[], name: string): JsonSchema {
  const nonNull = branches.filter((b) => b.type !== 'null');
  if (NULL_PREFERRED.has(name) && nonNull.length < branches.length) return { type: 'null' };
  return nonNull[0] ?? branches[0];
}

function typeOf(schema: JsonSchema, name: string): string | undefined {
  const type = schema.type;
  if (!Array.isArray(type)) return typeof type === 'string' ? type : undefined;
  const nonNull = type.filter((t) => t !== 'null');
  if (NULL_PREFERRED.has(name) && nonNull.length < type.length) return 'null';
  return nonNull[0] ?? 'null';
}

/**
 * A realistic example value for a JSON schema: its own `examples`, `const`, `default` or
 * first enum value where it has one, else a sample chosen by the property name (ids with
 * the right prefix, decimal strings, timestamps with a zone) that fits pattern and length.
 */
export function exampleFor(schema: JsonSchema, ctx: ExampleContext, name = '', parents: string[] = []): unknown {
  const resolved = ctx.components.resolve(schema);
  if (Array.isArray(resolved.examples) && resolved.examples.length > 0) return resolved.examples[0];
  if ('const' in resolved) return resolved.const;
  if (resolved.default !== undefined) return resolved.default;
  if (Array.isArray(resolved.enum) && resolved.enum.length > 0) {
    const preferred = ['customer.created', 'USAGE', 'SUM', 'PRE_PAID', 'COMPLETED', 'PURCHASED_CREDIT_DIRECT'].find((v) => (resolved.enum as unknown[]).includes(v));
    return preferred ?? resolved.enum[0];
  }
  for (const key of ['anyOf', 'oneOf'] as const) {
    const branches = resolved[key];
    if (Array.isArray(branches) && branches.length > 0) return exampleFor(pickBranch(branches as JsonSchema[], name), ctx, name, parents);
  }
  if (Array.isArray(resolved.allOf)) {
    const parts = (resolved.allOf as JsonSchema[]).map((s) => exampleFor(s, ctx, name, parents));
    return Object.assign({}, ...parts.filter((p) => p && typeof p === 'object'));
  }
  switch (typeOf(resolved, name)) {
    case 'null':
      return null;
    case 'string':
      return stringExample(resolved, name, parents, ctx);
    case 'integer':
    case 'number':
      return numberExample(resolved, name);
    case 'boolean':
      return name !== 'has_more';
    case 'array': {
      const items = (resolved.items ?? {}) as JsonSchema;
      const count = Math.max(1, typeof resolved.minItems === 'number' ? resolved.minItems : 1);
      const item = exampleFor(items, ctx, name, parents);
      return Array.from({ length: count }, () => item);
    }
    case 'object':
      return objectExample(resolved, ctx, name, parents);
    default:
      return freeFormObject(name);
  }
}

function objectExample(schema: JsonSchema, ctx: ExampleContext, name: string, parents: string[]): Record<string, unknown> {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema.required ?? []) as string[]);
  const out: Record<string, unknown> = {};
  for (const [key, property] of Object.entries(properties)) {
    if (ctx.requiredOnly && !required.has(key)) continue;
    out[key] = exampleFor(property, ctx, key, [...parents, name]);
  }
  if (Object.keys(properties).length === 0 && schema.additionalProperties && typeof schema.additionalProperties === 'object') {
    if (name === 'metadata' || name === 'properties') return freeFormObject(name);
    return { key: exampleFor(schema.additionalProperties as JsonSchema, ctx, 'value', [...parents, name]) };
  }
  return out;
}
