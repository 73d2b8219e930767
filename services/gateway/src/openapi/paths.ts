/** Express path parameters (`:id`) in their OpenAPI form (`{id}`). */
export function toOpenApiPath(expressPath: string): string {
  return expressPath.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');
}

/** Names of the path parameters, in order. */
export function pathParamNames(expressPath: string): string[] {
  return [...expressPath.matchAll(/:([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]);
}

/** The event ingestion endpoints: their errors carry a top-level `hint`. */
export function isIngestionPath(path: string): boolean {
  return path === '/v1/events' || path.startsWith('/v1/events/');
}

const ID_PREFIX_BY_SEGMENT: Record<string, string> = {
  customers: 'cust_',
  external: 'cust_',
  wallets: 'wallet_',
  terminate: 'wallet_',
  transactions: 'wtxn_',
  topup: 'wtxn_',
  debit: 'wtxn_',
  settle: 'wtxn_',
  'webhook-endpoints': 'we_',
  deliveries: 'whd_',
  test: 'whd_',
  meters: 'meter_',
  'api-keys': 'key_',
  plans: 'plan_',
  prices: 'price_',
  subscriptions: 'sub_',
  events: '',
};

/** The id prefix of the record a path returns (its last named segment that names one). */
export function resultIdPrefix(expressPath: string): string | undefined {
  const segments = expressPath.split('/').filter((s) => s && !s.startsWith(':'));
  for (const segment of segments.reverse()) {
    if (segment in ID_PREFIX_BY_SEGMENT) return ID_PREFIX_BY_SEGMENT[segment];
  }
  return undefined;
}

/** The id prefix of a path parameter: the record named by the segment just before it. */
export function paramIdPrefix(expressPath: string, param: string): string | undefined {
  const segments = expressPath.split('/').filter(Boolean);
  const at = segments.indexOf(`:${param}`);
  if (at <= 0) return undefined;
  return ID_PREFIX_BY_SEGMENT[segments[at - 1]];
}
