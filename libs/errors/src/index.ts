/**
 * Domain errors. They know nothing of HTTP: `@billstream/http` maps each kind to a
 * status and the `internal_error` code of the error envelope, in one place.
 */
export type ErrorKind =
  | 'validation'
  | 'too_large'
  | 'unauthenticated'
  | 'forbidden'
  | 'not_found'
  | 'gone'
  | 'already_exists'
  | 'version_conflict'
  | 'idempotency_conflict'
  | 'insufficient_credits'
  | 'insufficient_quota'
  | 'rate_limited'
  | 'unavailable'
  | 'database'
  | 'http_client'
  | 'internal';

export type ErrorDetails = Record<string, unknown>;

export class DomainError extends Error {
  readonly kind: ErrorKind;
  readonly details?: ErrorDetails;

  constructor(kind: ErrorKind, message: string, details?: ErrorDetails, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.kind = kind;
    this.details = details;
  }
}

export class ValidationError extends DomainError {
  constructor(message: string, details?: ErrorDetails) {
    super('validation', message, details);
  }
}

export class PayloadTooLargeError extends DomainError {
  constructor(message: string, details?: ErrorDetails) {
    super('too_large', message, details);
  }
}

export class UnauthenticatedError extends DomainError {
  constructor(message = 'Missing or invalid API key') {
    super('unauthenticated', message);
  }
}

export class ForbiddenError extends DomainError {
  constructor(message: string, details?: ErrorDetails) {
    super('forbidden', message, details);
  }
}

export class NotFoundError extends DomainError {
  constructor(message: string, details?: ErrorDetails) {
    super('not_found', message, details);
  }
}

/** The resource was there and is no more for this request: an expired or revoked signed link (410). */
export class GoneError extends DomainError {
  constructor(message: string, details?: ErrorDetails) {
    super('gone', message, details);
  }
}

export class AlreadyExistsError extends DomainError {
  constructor(message: string, details?: ErrorDetails) {
    super('already_exists', message, details);
  }
}

export class VersionConflictError extends DomainError {
  constructor(message: string, details?: ErrorDetails) {
    super('version_conflict', message, details);
  }
}

export class IdempotencyConflictError extends DomainError {
  constructor(message: string, details?: ErrorDetails) {
    super('idempotency_conflict', message, details);
  }
}

/** Not enough credits for a hold (402 `insufficient_credits`); `details.available` says what there is. */
export class InsufficientCreditsError extends DomainError {
  constructor(message: string, details: ErrorDetails & { available: string }) {
    super('insufficient_credits', message, details);
  }
}

/** Not enough quantity of a METERED hard-limit entitlement for a hold (402 `insufficient_quota`); `details.available` says what there is. */
export class InsufficientQuotaError extends DomainError {
  constructor(message: string, details: ErrorDetails & { available: string }) {
    super('insufficient_quota', message, details);
  }
}

export class RateLimitedError extends DomainError {
  readonly retryAfterSeconds: number;

  constructor(retryAfterSeconds: number, message = 'Rate limit exceeded') {
    super('rate_limited', message, { retry_after_seconds: retryAfterSeconds });
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

export class ServiceUnavailableError extends DomainError {
  constructor(message: string, details?: ErrorDetails, options?: { cause?: unknown }) {
    super('unavailable', message, details, options);
  }
}

export class DatabaseError extends DomainError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('database', message, undefined, options);
  }
}

export class HttpClientError extends DomainError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('http_client', message, undefined, options);
  }
}

export function isDomainError(err: unknown): err is DomainError {
  return err instanceof DomainError;
}

/** Postgres SQLSTATE of a driver error, when there is one. */
export function pgErrorCode(err: unknown): string | undefined {
  if (typeof err === 'object' && err !== null && 'code' in err) {
    const code = (err as { code: unknown }).code;
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code;
  }
  return undefined;
}

export const PG_UNIQUE_VIOLATION = '23505';
export const PG_SERIALIZATION_FAILURE = '40001';
export const PG_DEADLOCK = '40P01';
