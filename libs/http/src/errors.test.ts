import {
  AlreadyExistsError,
  DatabaseError,
  ForbiddenError,
  GoneError,
  IdempotencyConflictError,
  NotFoundError,
  PayloadTooLargeError,
  RateLimitedError,
  ServiceUnavailableError,
  UnauthenticatedError,
  ValidationError,
  VersionConflictError,
} from '@billstream/errors';
import { createLogger } from '@billstream/logger';
import { errorResponse } from './errors';

const logger = createLogger({ service: 'test', level: 'silent' });

describe('errorResponse: one mapping from errors to the envelope', () => {
  it.each([
    [new ValidationError('bad', { field: 'email' }), 400, 'validation_error'],
    [new PayloadTooLargeError('big'), 413, 'validation_error'],
    [new UnauthenticatedError(), 401, 'permission_denied'],
    [new ForbiddenError('no'), 403, 'permission_denied'],
    [new NotFoundError('gone'), 404, 'not_found'],
    [new GoneError('expired link'), 410, 'not_found'],
    [new AlreadyExistsError('dup'), 409, 'already_exists'],
    [new VersionConflictError('stale'), 409, 'version_conflict'],
    [new IdempotencyConflictError('other body'), 409, 'idempotency_conflict'],
    [new RateLimitedError(3), 429, 'service_unavailable'],
    [new ServiceUnavailableError('down'), 503, 'service_unavailable'],
    [new DatabaseError('db'), 500, 'database_error'],
  ])('%p -> %i %s', (err, status, code) => {
    const res = errorResponse(err, logger);
    expect(res.status).toBe(status);
    expect(res.body.success).toBe(false);
    expect(res.body.error.internal_error).toBe(code);
  });

  it('keeps details and adds Retry-After on 429', () => {
    expect(errorResponse(new ValidationError('bad', { field: 'email' }), logger).body.error.details).toEqual({ field: 'email' });
    expect(errorResponse(new RateLimitedError(7), logger).headers['Retry-After']).toBe('7');
  });

  it('turns a unique violation into 409 and any other driver error into a 500 without SQL', () => {
    const unique = Object.assign(new Error('duplicate key value violates unique constraint "x"'), { code: '23505', constraint: 'x' });
    expect(errorResponse(unique, logger).status).toBe(409);
    const other = Object.assign(new Error('relation "secret_table" does not exist'), { code: '42P01' });
    const res = errorResponse(other, logger);
    expect(res.status).toBe(500);
    expect(res.body.error.internal_error).toBe('database_error');
    expect(JSON.stringify(res.body)).not.toContain('secret_table');
  });

  it.each(['40P01', '40001', '55P03'])('answers a transaction rolled back by another (%s) with 503 and Retry-After, wrapped or not', (code) => {
    const driver = Object.assign(new Error('deadlock detected on relation "secret_table"'), { code });
    for (const err of [driver, new DatabaseError('Database operation failed', { cause: driver })]) {
      const res = errorResponse(err, logger);
      expect(res.status).toBe(503);
      expect(res.body.error.internal_error).toBe('service_unavailable');
      expect(res.headers['Retry-After']).toBe('1');
      expect(res.body.error.details).toEqual({ sqlstate: code, reference: expect.any(String) });
      expect(JSON.stringify(res.body)).not.toContain('secret_table');
    }
  });

  it('hides unexpected errors behind a reference', () => {
    const res = errorResponse(new TypeError('cannot read x of undefined at /src/secret.ts:12'), logger);
    expect(res.status).toBe(500);
    expect(res.body.error.internal_error).toBe('internal_error');
    expect(JSON.stringify(res.body)).not.toContain('secret.ts');
    expect(res.body.error.details).toEqual({ reference: expect.any(String) });
  });

  it('adds a hint on ingestion endpoints', () => {
    const res = errorResponse(new ValidationError('bad'), logger, { ingestion: true });
    expect(typeof res.body.hint).toBe('string');
    expect(errorResponse(new ValidationError('bad'), logger).body.hint).toBeUndefined();
  });
});
