/**
 * The one error a call throws: an error answer of the API (its envelope, status and request
 * id) or a request that got no answer (`network_error`, `timeout`, status 0).
 */

/** `internal_error` values of the API's envelope, and the two of this client for no answer. */
export type InternalError =
  | 'validation_error'
  | 'permission_denied'
  | 'not_found'
  | 'already_exists'
  | 'version_conflict'
  | 'idempotency_conflict'
  | 'service_unavailable'
  | 'database_error'
  | 'http_client_error'
  | 'internal_error'
  | 'network_error'
  | 'timeout'
  | (string & {});

export interface BillstreamErrorInit {
  status: number;
  internal_error: InternalError;
  message: string;
  details?: Record<string, unknown>;
  hint?: string;
  requestId?: string;
  /** `Retry-After` of a 429 or 503, in seconds. */
  retryAfterSeconds?: number;
  /** How many attempts the call made before it gave up. */
  attempts?: number;
  cause?: unknown;
}

export class BillstreamError extends Error {
  /** HTTP status; 0 when no answer came (network error, timeout). */
  readonly status: number;
  /** The envelope's `internal_error` (kept in the wire's spelling, like every body field). */
  readonly internal_error: InternalError;
  readonly details?: Record<string, unknown>;
  /** The ingestion endpoints' `hint`. */
  readonly hint?: string;
  /** `X-Request-Id` of the answer (or the one sent): quote it to find the call in the logs. */
  readonly requestId?: string;
  readonly retryAfterSeconds?: number;
  readonly attempts: number;

  constructor(init: BillstreamErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'BillstreamError';
    this.status = init.status;
    this.internal_error = init.internal_error;
    this.details = init.details;
    this.hint = init.hint;
    this.requestId = init.requestId;
    this.retryAfterSeconds = init.retryAfterSeconds;
    this.attempts = init.attempts ?? 1;
  }
}

export function isBillstreamError(err: unknown): err is BillstreamError {
  return err instanceof BillstreamError;
}

interface Envelope {
  error?: { message?: unknown; internal_error?: unknown; details?: unknown };
  hint?: unknown;
}

/** The error of an error answer: its envelope when it has one, else a plain description. */
export function errorFromAnswer(status: number, body: unknown, requestId: string | undefined, retryAfterSeconds: number | undefined): BillstreamError {
  const envelope = (typeof body === 'object' && body !== null ? body : {}) as Envelope;
  const error = envelope.error ?? {};
  return new BillstreamError({
    status,
    internal_error: typeof error.internal_error === 'string' ? error.internal_error : status >= 500 ? 'internal_error' : 'http_client_error',
    message: typeof error.message === 'string' ? error.message : `HTTP ${status}`,
    details: typeof error.details === 'object' && error.details !== null ? (error.details as Record<string, unknown>) : undefined,
    hint: typeof envelope.hint === 'string' ? envelope.hint : undefined,
    requestId,
    retryAfterSeconds,
  });
}
