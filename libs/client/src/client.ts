/**
 * The typed path client: `client.GET('/v1/wallets/{id}', { params: { path: { id } } })`.
 * Paths, parameters, bodies and answers are typed from docs/openapi.json; each call sends
 * the API key, keys its writes (idempotency.ts), times out each attempt, retries what is
 * safe to repeat (retry.ts) and throws a BillstreamError for anything but a 2xx answer.
 */
import { randomUUID } from 'node:crypto';
import { EventBatcher, type BatcherOptions, type BatchSender } from './batcher';
import { BillstreamError, errorFromAnswer } from './errors';
import { isIdempotentPost, withIdempotency } from './idempotency';
import { reservationCalls, type ReservationCalls } from './reservations';
import { backoffMs, isSafeToRepeat, isRetriedStatus, RETRY_DEFAULTS, retryAfterMs, retryAfterSeconds, sleep, type RetryOptions } from './retry';
import type { CallOptions, InitArgs, Method, Operation, PathsWith, ResponseBody } from './types';

export interface ClientOptions {
  apiKey: string;
  /** The gateway's address (default http://127.0.0.1:8080, where `npm start` listens). */
  baseUrl?: string;
  /** Time allowed for each attempt, answer body included (default 30,000 ms). */
  timeoutMs?: number;
  retry?: Partial<RetryOptions>;
  /** Settings of `client.events`, the usage event batcher. */
  events?: Partial<BatcherOptions>;
  /** Told before each retry: what failed and how long the client waits. */
  onRetry?: (info: RetryInfo) => void;
  /** Another fetch (default: the global one of Node 18+). */
  fetch?: typeof fetch;
  userAgent?: string;
}

export interface RetryInfo {
  method: string;
  path: string;
  attempt: number;
  delayMs: number;
  error: BillstreamError;
}

type Call<M extends Method> = <P extends PathsWith<M>>(path: P, ...init: InitArgs<Operation<P, M>>) => Promise<ResponseBody<P, M>>;

/** The typed calls, usage events in bulk, and the reservation helpers (reservations.ts). */
export interface BillstreamClient extends ReservationCalls {
  GET: Call<'get'>;
  POST: Call<'post'>;
  PUT: Call<'put'>;
  PATCH: Call<'patch'>;
  DELETE: Call<'delete'>;
  /** Usage events in bulk: `await client.events.enqueue(event)`; `close()` sends the rest. */
  readonly events: EventBatcher;
  /** Sends every buffered event, then refuses new ones. */
  close(options?: { timeoutMs?: number }): Promise<void>;
}

interface RawInit extends CallOptions {
  params?: { path?: Record<string, unknown>; query?: Record<string, unknown>; header?: Record<string, unknown> };
  body?: unknown;
}

export const DEFAULT_BASE_URL = 'http://127.0.0.1:8080';
const DEFAULT_TIMEOUT_MS = 30_000;
const USER_AGENT = 'billstream-client-ts/0.1.0';

export function createClient(options: ClientOptions): BillstreamClient {
  if (!options.apiKey) throw new TypeError('createClient: apiKey is required');
  const baseUrl = (options.baseUrl ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
  const retry: RetryOptions = { ...RETRY_DEFAULTS, ...options.retry };
  const doFetch = options.fetch ?? fetch;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;

  async function call(method: Method, path: string, init: RawInit = {}): Promise<unknown> {
    const given = { ...stringValues(init.params?.header), ...init.headers };
    const headerKey = Object.entries(given).find(([name]) => name.toLowerCase() === 'idempotency-key')?.[1];
    const body = withIdempotency(method, path, init.body, randomUUID, headerKey);
    const url = baseUrl + fillPath(path, init.params?.path) + queryString(init.params?.query);
    const safe = isSafeToRepeat(method, body) || isIdempotentPost(method, path);
    const requestId = init.requestId ?? randomUUID();
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string> = {
      accept: 'application/json',
      authorization: `Bearer ${options.apiKey}`,
      'user-agent': options.userAgent ?? USER_AGENT,
      'x-request-id': requestId,
      ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
      ...given,
    };
    for (let attempt = 1; ; attempt++) {
      const outcome = await attemptOnce(doFetch, url, { method: method.toUpperCase(), headers, body: payload }, init.timeoutMs ?? timeoutMs, requestId, init.signal);
      if (outcome.ok) return outcome.body;
      const error = outcome.error;
      const retryable = safe && attempt < retry.maxAttempts && (error.status === 0 || isRetriedStatus(error.status));
      const named = outcome.retryAfter === undefined ? undefined : retryAfterMs(outcome.retryAfter, retry.baseDelayMs);
      if (!retryable || (named !== undefined && named > retry.maxRetryAfterMs)) throw withAttempts(error, attempt);
      const delayMs = named ?? backoffMs(attempt, retry);
      options.onRetry?.({ method: method.toUpperCase(), path, attempt, delayMs, error });
      await sleep(delayMs, init.signal);
    }
  }

  const bulkSender: BatchSender = async (events, signal) => {
    await call('post', '/v1/events/bulk', { body: { events }, signal });
  };
  let batcher: EventBatcher | undefined;
  const typed = <M extends Method>(method: M) => ((path: string, init?: RawInit) => call(method, path, init)) as unknown as Call<M>;

  return {
    ...reservationCalls((path, init) => call('post', path, init)),
    GET: typed('get'),
    POST: typed('post'),
    PUT: typed('put'),
    PATCH: typed('patch'),
    DELETE: typed('delete'),
    get events() {
      batcher ??= new EventBatcher(bulkSender, options.events);
      return batcher;
    },
    async close(closeOptions) {
      await batcher?.close(closeOptions);
    },
  };
}

type Outcome = { ok: true; body: unknown } | { ok: false; error: BillstreamError; retryAfter?: string };

/** One request: its JSON answer, or the error it ends in (an error answer, a timeout, no answer). */
async function attemptOnce(
  doFetch: typeof fetch,
  url: string,
  request: { method: string; headers: Record<string, string>; body?: string },
  timeoutMs: number,
  requestId: string,
  signal: AbortSignal | undefined,
): Promise<Outcome> {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  const onAbort = () => controller.abort(signal?.reason);
  if (signal?.aborted) throw signal.reason;
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const response = await doFetch(url, { ...request, signal: controller.signal });
    const text = await response.text();
    const answeredId = response.headers.get('x-request-id') ?? requestId;
    const parsed = parseJson(text);
    if (response.ok) {
      if (parsed.ok) return { ok: true, body: parsed.value };
      return { ok: false, error: new BillstreamError({ status: response.status, internal_error: 'http_client_error', message: 'The answer is not JSON', requestId: answeredId }) };
    }
    const retryAfter = response.headers.get('retry-after') ?? undefined;
    const error = errorFromAnswer(response.status, parsed.ok ? parsed.value : undefined, answeredId, retryAfterSeconds(retryAfter ?? null));
    return { ok: false, error, retryAfter };
  } catch (err) {
    if (signal?.aborted) throw signal.reason;
    const message = timedOut ? `No answer within ${timeoutMs} ms` : `Request failed: ${describe(err)}`;
    return { ok: false, error: new BillstreamError({ status: 0, internal_error: timedOut ? 'timeout' : 'network_error', message, requestId, cause: err }) };
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
}

function withAttempts(error: BillstreamError, attempts: number): BillstreamError {
  if (attempts === 1) return error;
  return new BillstreamError({ ...error, message: error.message, cause: error.cause, attempts });
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  if (text === '') return { ok: true, value: undefined };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/** `/v1/wallets/{id}` with `{id}` filled in (encoded); a missing one is a programming error. */
export function fillPath(path: string, values: Record<string, unknown> | undefined): string {
  return path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const value = values?.[name];
    if (value === undefined || value === null || value === '') throw new TypeError(`Path parameter "${name}" of ${path} is missing`);
    return encodeURIComponent(String(value));
  });
}

/** `?a=1&b=x,y`: lists comma-separated (the API's form), undefined values left out. */
export function queryString(query: Record<string, unknown> | undefined): string {
  if (!query) return '';
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue;
    search.append(key, Array.isArray(value) ? value.map(String).join(',') : String(value));
  }
  const text = search.toString();
  return text === '' ? '' : `?${text}`;
}

function stringValues(record: Record<string, unknown> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(record ?? {})) if (value !== undefined && value !== null) out[key] = String(value);
  return out;
}

function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? err.message;
}
