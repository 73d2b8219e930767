/**
 * When a call is tried again and after how long. A 429, any 5xx and a request that got no
 * answer are retried, and only when a repeat cannot do the work twice: a GET, or a write that
 * carries an idempotency key or event ids (ADR 0018, amended: every 5xx since issue #53).
 */

export interface RetryOptions {
  /** Attempts in all, the first included (default 4; 1 turns retries off). */
  maxAttempts: number;
  /** Base of the exponential backoff (default 200 ms). */
  baseDelayMs: number;
  /** Cap of one backoff wait (default 5,000 ms). */
  maxDelayMs: number;
  /** A `Retry-After` longer than this is not waited for: the error is thrown (default 60,000 ms). */
  maxRetryAfterMs: number;
}

export const RETRY_DEFAULTS: RetryOptions = { maxAttempts: 4, baseDelayMs: 200, maxDelayMs: 5_000, maxRetryAfterMs: 60_000 };

/** The answers a call that is safe to repeat is tried again after: 429 and every 5xx. */
export function isRetriedStatus(status: number): boolean {
  return status === 429 || (status >= 500 && status <= 599);
}

/**
 * A write is safe to repeat when the server deduplicates it: top-ups, debits and payments by
 * `idempotency_key`, usage events by `event_id` (every event of a bulk request).
 */
export function isSafeToRepeat(method: string, body: unknown): boolean {
  const m = method.toUpperCase();
  if (m === 'GET' || m === 'HEAD') return true;
  if (m !== 'POST' && m !== 'PUT') return false;
  if (typeof body !== 'object' || body === null) return false;
  const record = body as Record<string, unknown>;
  if (typeof record.idempotency_key === 'string' && record.idempotency_key !== '') return true;
  if (typeof record.event_id === 'string' && record.event_id !== '') return true;
  const events = record.events;
  return (
    Array.isArray(events) &&
    events.length > 0 &&
    events.every((e) => typeof e === 'object' && e !== null && typeof (e as Record<string, unknown>).event_id === 'string')
  );
}

/**
 * "Full jitter" backoff before attempt `attempt + 1` (attempt counts from 1): a random wait
 * in [0, min(max, base * 2^(attempt-1))], so clients that failed together do not return together.
 */
export function backoffMs(attempt: number, options: Pick<RetryOptions, 'baseDelayMs' | 'maxDelayMs'>, random: () => number = Math.random): number {
  const ceiling = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** Math.max(0, attempt - 1));
  return Math.floor(random() * ceiling);
}

/**
 * The wait after a 429 or 503 that names one: `Retry-After` (whole seconds or an HTTP date),
 * plus up to one base delay of jitter; undefined when the header is absent or unreadable.
 */
export function retryAfterMs(header: string | null, baseDelayMs: number, now = Date.now(), random: () => number = Math.random): number | undefined {
  const seconds = retryAfterSeconds(header, now);
  if (seconds === undefined) return undefined;
  return seconds * 1000 + Math.floor(random() * baseDelayMs);
}

export function retryAfterSeconds(header: string | null, now = Date.now()): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Number(value);
  const date = Date.parse(value);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, Math.ceil((date - now) / 1000));
}

/** Waits `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
