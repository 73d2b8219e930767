import type { z } from 'zod';
import type { RouteDef } from '@billstream/contracts';
import {
  AlreadyExistsError,
  ForbiddenError,
  GoneError,
  IdempotencyConflictError,
  InsufficientCreditsError,
  NotFoundError,
  PayloadTooLargeError,
  RateLimitedError,
  ServiceUnavailableError,
  UnauthenticatedError,
  ValidationError,
  VersionConflictError,
} from '@billstream/errors';
import { errorResponse, MAX_JSON_DEPTH, MiB, parseOrThrow } from '@billstream/http';
import { createLogger } from '@billstream/logger';
import { SAMPLE_UUID } from './examples';
import { isIngestionPath, pathParamNames } from './paths';

const ERROR_ENVELOPE_REF = '#/components/schemas/ErrorEnvelope';
/** A fixed log reference, so that the generated document is stable. */
const SAMPLE_REFERENCE = '01JDQ8Z6Y4K2M9N3P5R7T9V1X3';

const silent = createLogger({ service: 'openapi', level: 'silent' });

/** Statuses every public route documents. */
const ALWAYS_DOCUMENTED = [400, 401, 403, 429, 500];

const DESCRIPTIONS: Record<number, string> = {
  400:
    'Invalid input (`validation_error`); `details.field` names the first bad field, `details.issues` lists them all. ' +
    `Also a path that does not decode, a NUL or an unpaired surrogate anywhere, a body nested deeper than ${MAX_JSON_DEPTH} levels, ` +
    'a repeated or unknown query parameter (docs/api.md, "Refused input")',
  401: 'Missing, invalid or revoked API key (`permission_denied`)',
  403: 'The API key lacks the permission this operation needs (`permission_denied`)',
  402: 'Not enough available for a hold: credits (`insufficient_credits`) or quantity of an entitlement (`insufficient_quota`); `details.available` says how much is available',
  404: 'The record does not exist in the caller tenant and environment, or a referenced one does not (`not_found`)',
  409: 'Conflict: a duplicate (`already_exists`), a stale `If-Match` (`version_conflict`) or an idempotency key reused with another body (`idempotency_conflict`)',
  410: "The signed link expired or its invoice's links were revoked (`not_found`); ask the seller for a new link",
  413: 'The request body is larger than the limit (`validation_error`)',
  429: 'Rate limit of the tenant exceeded (`service_unavailable`); wait for `Retry-After` seconds',
  500: 'Unexpected failure (`internal_error`, `database_error` or `http_client_error`); the message carries a log reference only',
  503: 'A dependency is unavailable (`service_unavailable`); retry with exponential backoff',
};

const PORTAL_401 = { token: 'Missing, unknown, expired or revoked portal session token (`permission_denied`)', link: 'A portal link that is not valid or has expired (`permission_denied`)' };

/** A 503 of event ingestion is not a "no" (issue #11): the producer cannot know whether the broker kept the events. */
const INGESTION_503 =
  'The broker did not acknowledge in time (`service_unavailable`): the events are **not known to be stored**, neither accepted ' +
  'nor refused; some or all of them may be stored once the broker recovers. Retry with exponential backoff and the same ' +
  '`event_id` values (`details.event_ids` lists them, generated ones included): copies already stored are ignored. Always send ' +
  'your own `event_id`, so that a retry after a timeout without any answer is deduplicated too';

/** Event ingestion: answered by the gateway itself, which publishes to Kafka. */
function isIngestion(route: RouteDef): boolean {
  return route.service === 'gateway' && isIngestionPath(route.path);
}

export interface RequestExamples {
  params?: unknown;
  query?: unknown;
  body?: unknown;
  /** Top-level property names of the body schema. */
  bodyFields?: string[];
}

interface NamedExample {
  summary: string;
  value: unknown;
}

function envelopeOf(err: unknown, route: RouteDef): unknown {
  const { body } = errorResponse(err, silent, { ingestion: isIngestionPath(route.path) });
  const reference = /\(reference ([0-9A-Z]{26})\)/.exec(body.error.message)?.[1];
  if (!reference) return body;
  return JSON.parse(JSON.stringify(body).split(reference).join(SAMPLE_REFERENCE));
}

function failureOf(schema: z.ZodType | undefined, value: unknown, what: string): unknown {
  if (!schema) return undefined;
  try {
    parseOrThrow(schema, value, what);
    return undefined;
  } catch (err) {
    return err;
  }
}

/** PUT and PATCH take `If-Match`: a stale ETag is a 409 `version_conflict`. */
function isUpdate(route: RouteDef): boolean {
  return route.method === 'put' || route.method === 'patch';
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The error the route really gives for a broken request: a missing field, an unknown one, a bad query. */
function validationFailure(route: RouteDef, examples: RequestExamples): unknown {
  const body = examples.body;
  if (route.body && isRecord(body)) {
    for (const key of Object.keys(body)) {
      const { [key]: _dropped, ...rest } = body;
      void _dropped;
      const err = failureOf(route.body, rest, 'Body');
      if (err) return err;
    }
    const err = failureOf(route.body, { ...body, unknown_field: true }, 'Body');
    if (err) return err;
  }
  if (route.query) {
    const query = isRecord(examples.query) ? examples.query : {};
    const err =
      ('limit' in query ? failureOf(route.query, { ...query, limit: '0' }, 'Query') : undefined) ??
      failureOf(route.query, { ...query, unknown_param: 'x' }, 'Query');
    if (err) return err;
  }
  const param = pathParamNames(route.path)[0];
  if (!param) return new ValidationError('Request is invalid');
  const params = isRecord(examples.params) ? examples.params : {};
  const err = failureOf(route.params, { ...params, [param]: 'x'.repeat(300) }, 'Path');
  if (err) return err;
  return new ValidationError(`Request is invalid for this ${param}`, { field: param });
}

function referenceField(examples: RequestExamples): string | undefined {
  return examples.bodyFields?.find((k) => k.endsWith('_id'));
}

function examplesFor(status: number, route: RouteDef, examples: RequestExamples): Record<string, NamedExample> {
  const named = (summary: string, err: unknown): NamedExample => ({ summary, value: envelopeOf(err, route) });
  switch (status) {
    case 400:
      return { validation_error: named('A field is missing or invalid', validationFailure(route, examples)) };
    case 401:
      return {
        missing_key: named('No API key sent', new UnauthenticatedError('Missing API key: send "Authorization: Bearer <key>" or "X-API-Key: <key>"')),
        invalid_key: named('Unknown or revoked key', new UnauthenticatedError('Invalid or revoked API key')),
      };
    case 403:
      return {
        permission_denied: named(
          'The key lacks the permission',
          new ForbiddenError(`This API key lacks the ${route.permission} permission`, { permission: route.permission }),
        ),
      };
    case 404: {
      const out: Record<string, NamedExample> = {};
      const params = isRecord(examples.params) ? examples.params : {};
      const param = pathParamNames(route.path)[0];
      if (param) out.not_found = named('No such record here', new NotFoundError('The requested record does not exist', { [param]: params[param] }));
      const field = referenceField(examples);
      if (field) out.reference_not_found = named('A referenced record does not exist', new NotFoundError(`${field} refers to no record`, { field }));
      if (Object.keys(out).length === 0) out.not_found = named('No such record here', new NotFoundError('The requested record does not exist'));
      return out;
    }
    case 409: {
      const out: Record<string, NamedExample> = {};
      if (route.errors?.includes(409) && route.method !== 'patch') {
        out.already_exists = named('A record with these unique values exists', new AlreadyExistsError('A resource with these unique values already exists'));
      }
      if (isUpdate(route)) {
        out.version_conflict = named('Stale If-Match', new VersionConflictError('The record was modified by another request; read it again'));
      }
      if (examples.bodyFields?.includes('idempotency_key')) {
        const key = isRecord(examples.body) && typeof examples.body.idempotency_key === 'string' ? examples.body.idempotency_key : 'req-2026-01-15-0001';
        out.idempotency_conflict = named(
          'Idempotency key reused with another body',
          new IdempotencyConflictError('This idempotency_key was used with a different request body', { idempotency_key: key }),
        );
      }
      if (Object.keys(out).length === 0) {
        out.already_exists = named('A record with these unique values exists', new AlreadyExistsError('A resource with these unique values already exists'));
      }
      return out;
    }
    case 402:
      return {
        insufficient_credits: named(
          'Not enough credits available',
          new InsufficientCreditsError('Not enough credits available for this reservation', { field: 'credits', available: '1500' }),
        ),
      };
    case 410:
      return { gone: named('An expired or revoked signed link', new GoneError('This link expired: ask the seller for a new one', { reason: 'expired' })) };
    case 413:
      return {
        too_large: named('Body over the limit', new PayloadTooLargeError('Request body is too large', { limit_bytes: route.bodyLimitBytes ?? MiB })),
      };
    case 429:
      return { rate_limited: named('Too many requests for this tenant', new RateLimitedError(1)) };
    case 500:
      return { internal_error: named('Unexpected failure', new Error('unexpected')) };
    case 503:
      if (isIngestion(route)) {
        return {
          service_unavailable: named(
            'Not known to be stored: retry with the same event ids',
            new ServiceUnavailableError('The event queue is unavailable; the events of this request are not known to be stored: retry with the same event ids', {
              retryable: true,
              event_ids: [SAMPLE_UUID],
            }),
          ),
        };
      }
      return {
        service_unavailable: named('A dependency is down', new ServiceUnavailableError(`The ${route.service} service is unavailable; retry later`)),
      };
    default:
      return {};
  }
}

/**
 * The statuses a route documents: the usual five, its own, 404 with path params, 409 for
 * PUT/PATCH (If-Match), 413 with a body and 503 when the gateway forwards it.
 */
function documentedStatuses(route: RouteDef): number[] {
  const statuses = new Set([...ALWAYS_DOCUMENTED, ...(route.errors ?? [])]);
  // A portal call has no permission to lack: its token is valid or it is 401.
  if (route.portal) statuses.delete(403);
  if (pathParamNames(route.path).length > 0) statuses.add(404);
  if (route.body) statuses.add(413);
  if (route.service !== 'gateway') statuses.add(503);
  if (isUpdate(route)) statuses.add(409);
  return [...statuses].sort((a, b) => a - b);
}

/** The error responses of a route, each with example bodies in the envelope. */
export function errorResponses(route: RouteDef, examples: RequestExamples): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const status of documentedStatuses(route)) {
    const response: Record<string, unknown> = {
      description: (status === 503 && isIngestion(route) ? INGESTION_503 : status === 401 && route.portal ? PORTAL_401[route.portal] : DESCRIPTIONS[status]) ?? 'Error',
      content: { 'application/json': { schema: { $ref: ERROR_ENVELOPE_REF }, examples: examplesFor(status, route, examples) } },
    };
    if (status === 429) response.headers = { 'Retry-After': { $ref: '#/components/headers/Retry-After' } };
    out[String(status)] = response;
  }
  return out;
}
