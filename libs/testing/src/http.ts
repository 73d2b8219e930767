import { request } from 'undici';

export interface ApiResponse<T = any> {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: T;
  text: string;
}

/** A small JSON client for tests: `api.post('/v1/customers', body)`. */
export class ApiClient {
  constructor(
    readonly baseUrl: string,
    readonly key?: string,
    private readonly headerStyle: 'bearer' | 'x-api-key' = 'bearer',
  ) {}

  withKey(key: string | undefined, headerStyle: 'bearer' | 'x-api-key' = 'bearer'): ApiClient {
    return new ApiClient(this.baseUrl, key, headerStyle);
  }

  async call<T = any>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<ApiResponse<T>> {
    const h: Record<string, string> = { ...headers };
    if (this.key) {
      if (this.headerStyle === 'bearer') h.authorization = `Bearer ${this.key}`;
      else h['x-api-key'] = this.key;
    }
    let payload: string | undefined;
    if (body !== undefined) {
      payload = typeof body === 'string' ? body : JSON.stringify(body);
      h['content-type'] = h['content-type'] ?? 'application/json';
    }
    const res = await request(this.baseUrl + path, { method: method as 'GET', headers: h, body: payload });
    const text = await res.body.text();
    let parsed: unknown = undefined;
    if (text.length > 0) {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = text;
      }
    }
    return { status: res.statusCode, headers: res.headers, body: parsed as T, text };
  }

  get<T = any>(path: string, headers?: Record<string, string>) {
    return this.call<T>('GET', path, undefined, headers);
  }
  post<T = any>(path: string, body?: unknown, headers?: Record<string, string>) {
    return this.call<T>('POST', path, body ?? {}, headers);
  }
  put<T = any>(path: string, body?: unknown, headers?: Record<string, string>) {
    return this.call<T>('PUT', path, body ?? {}, headers);
  }
  patch<T = any>(path: string, body?: unknown, headers?: Record<string, string>) {
    return this.call<T>('PATCH', path, body ?? {}, headers);
  }
  delete<T = any>(path: string, headers?: Record<string, string>) {
    return this.call<T>('DELETE', path, undefined, headers);
  }
}
