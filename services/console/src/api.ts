/**
 * The console's only way to the data: the public API of the gateway it is served by, with the
 * key the person entered (ADR 0050). An error answer becomes an `ApiError` that keeps the
 * envelope's message and the field it names, for the form or page that asked.
 */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly field: string | undefined,
    readonly details: Record<string, unknown>,
  ) {
    super(message);
  }
}

export interface Page<T> {
  items: T[];
  pagination: { total: number; limit: number; offset: number };
}

export type Query = Record<string, string | number | boolean | undefined>;

export interface Api {
  get<T>(path: string, query?: Query): Promise<T>;
  post<T>(path: string, body: unknown, idempotencyKey?: string): Promise<T>;
  put<T>(path: string, body: unknown): Promise<T>;
  delete(path: string): Promise<void>;
}

export function queryString(query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') params.set(k, String(v));
  const s = params.toString();
  return s ? `?${s}` : '';
}

export function createApi(key: string, base = ''): Api {
  async function call<T>(method: string, path: string, body?: unknown, idempotencyKey?: string): Promise<T> {
    const headers: Record<string, string> = { authorization: `Bearer ${key}`, accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (idempotencyKey) headers['idempotency-key'] = idempotencyKey;
    let res: Response;
    try {
      res = await fetch(`${base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'omit' });
    } catch {
      throw new ApiError('The gateway did not answer; check that Billstream is running', 0, undefined, {});
    }
    const text = await res.text();
    const parsed = text ? (JSON.parse(text) as unknown) : undefined;
    if (!res.ok) {
      const error = (parsed as { error?: { message?: string; details?: Record<string, unknown> } } | undefined)?.error;
      const details = error?.details ?? {};
      throw new ApiError(error?.message ?? `The API answered ${res.status}`, res.status, typeof details.field === 'string' ? details.field : undefined, details);
    }
    return parsed as T;
  }
  return {
    get: (path, query) => call('GET', `${path}${queryString(query)}`),
    post: (path, body, idempotencyKey) => call('POST', path, body, idempotencyKey),
    put: (path, body) => call('PUT', path, body),
    delete: (path) => call<void>('DELETE', path),
  };
}
