import type { ErrorEnvelope } from '@billstream/contracts';
import { DomainError, ErrorKind, PG_DEADLOCK, PG_SERIALIZATION_FAILURE, PG_UNIQUE_VIOLATION, pgErrorCode } from '@billstream/errors';
import { newUlid } from '@billstream/ids';
import type { Logger } from '@billstream/logger';

const KIND_TO_HTTP: Record<ErrorKind, { status: number; code: string }> = {
  validation: { status: 400, code: 'validation_error' },
  too_large: { status: 413, code: 'validation_error' },
  unauthenticated: { status: 401, code: 'permission_denied' },
  forbidden: { status: 403, code: 'permission_denied' },
  not_found: { status: 404, code: 'not_found' },
  gone: { status: 410, code: 'not_found' },
  already_exists: { status: 409, code: 'already_exists' },
  version_conflict: { status: 409, code: 'version_conflict' },
  idempotency_conflict: { status: 409, code: 'idempotency_conflict' },
  insufficient_credits: { status: 402, code: 'insufficient_credits' },
  insufficient_quota: { status: 402, code: 'insufficient_quota' },
  rate_limited: { status: 429, code: 'service_unavailable' },
  unavailable: { status: 503, code: 'service_unavailable' },
  database: { status: 500, code: 'database_error' },
  http_client: { status: 500, code: 'http_client_error' },
  internal: { status: 500, code: 'internal_error' },
};

const INGESTION_HINTS: Partial<Record<ErrorKind, string>> = {
  validation: 'Fix the field named in details and send the request again; nothing of it was accepted.',
  too_large: 'Send at most 1,000 events and 5 MiB per bulk request.',
  unauthenticated: 'Send your API key as "Authorization: Bearer <key>" or "X-API-Key: <key>".',
  forbidden: 'Use a key with the events:write (or events:read) permission.',
  rate_limited: 'Wait for the number of seconds in Retry-After, then retry.',
  unavailable:
    'Events answered 503 are not known to be stored (neither accepted nor refused): retry with exponential backoff ' +
    'and the same event_id values (details.event_ids); copies already stored are ignored.',
};

export interface ErrorResponse {
  status: number;
  body: ErrorEnvelope;
  headers: Record<string, string>;
}

/**
 * The one place where errors become HTTP: a status and the spec's envelope. Unique
 * violations become 409; any other failure is a 500 whose body carries only a log reference.
 */
export function errorResponse(err: unknown, logger: Logger, options: { ingestion?: boolean } = {}): ErrorResponse {
  let kind: ErrorKind;
  let message: string;
  let details: Record<string, unknown> | undefined;
  const headers: Record<string, string> = {};

  const transient = transientConflict(err);
  if (transient) {
    // Rolled back whole: nothing of the request was written, and the same request can succeed.
    kind = 'unavailable';
    message = 'The request met a concurrent change and was not applied; send it again';
    headers['Retry-After'] = '1';
    details = { sqlstate: transient };
  } else if (err instanceof DomainError) {
    kind = err.kind;
    message = err.message;
    details = err.details;
    if (err.kind === 'rate_limited') {
      headers['Retry-After'] = String((err.details?.retry_after_seconds as number | undefined) ?? 1);
    }
  } else if (pgErrorCode(err) === PG_UNIQUE_VIOLATION) {
    kind = 'already_exists';
    message = 'A resource with these unique values already exists';
    const constraint = (err as { constraint?: string }).constraint;
    details = constraint ? { constraint } : undefined;
  } else if (pgErrorCode(err)) {
    kind = 'database';
    message = 'Database operation failed';
  } else {
    kind = 'internal';
    message = 'Internal error';
  }

  const { status, code } = KIND_TO_HTTP[kind];
  if (status >= 500) {
    const ref = newUlid();
    // The logger writes err with its message, stack, Postgres fields and cause chain (ADR 0034).
    logger.error('request failed', { ref, err });
    message = `${message} (reference ${ref})`;
    if (transient) details = { ...details, reference: ref };
    else details = err instanceof DomainError && kind === 'unavailable' ? err.details : { reference: ref };
  }
  const body: ErrorEnvelope = {
    success: false,
    error: { message, internal_error: code, ...(details ? { details } : {}) },
  };
  if (options.ingestion) body.hint = INGESTION_HINTS[kind] ?? 'Retry later or contact support with the reference.';
  return { status, body, headers };
}

/** Postgres `lock_not_available`: a lock timeout or NOWAIT met a lock held by another transaction. */
const PG_LOCK_NOT_AVAILABLE = '55P03';
const TRANSIENT = new Set([PG_DEADLOCK, PG_SERIALIZATION_FAILURE, PG_LOCK_NOT_AVAILABLE]);

/**
 * The SQLSTATE of a deadlock, serialization failure or lock timeout behind `err` (the driver
 * error itself or the cause of a DatabaseError): the transaction was rolled back because of
 * another one, so the answer is 503 "send it again", not a 500.
 */
function transientConflict(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e && depth < 3; e = (e as { cause?: unknown }).cause, depth += 1) {
    const code = pgErrorCode(e);
    if (code && TRANSIENT.has(code)) return code;
  }
  return undefined;
}
