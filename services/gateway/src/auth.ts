import type { IncomingHttpHeaders } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import type { Permission } from '@billstream/contracts';
import { ForbiddenError, RateLimitedError, UnauthenticatedError } from '@billstream/errors';
import type { RequestContext } from '@billstream/http';
import { hasPermission, type ApiKeyService, type Principal } from './api-keys/service';
import type { TokenBucketLimiter } from './rate-limit';
import { sourceAddressOf } from './source-address';

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** The key of a request: `Authorization: Bearer` wins over `X-API-Key` when both are sent. */
export function keyOf(req: Request): string | undefined {
  return keyOfHeaders(req.headers);
}

export function principalOf(res: Response): Principal {
  return res.locals.principal as Principal;
}

/** The key in request headers (`keyOf`). */
export function keyOfHeaders(headers: IncomingHttpHeaders): string | undefined {
  const authorization = headers.authorization;
  if (authorization) return BEARER.exec(authorization)?.[1];
  const key = headers['x-api-key'];
  return (typeof key === 'string' ? key : key?.[0])?.trim() || undefined;
}

/** Limits of the callers a gateway admits (ADR 0032). */
export interface CallerLimits {
  /** Per tenant, for every authenticated request. */
  tenants: TokenBucketLimiter;
  /** Per source address, for every failed authentication; an empty bucket refuses any key lookup. */
  failures: TokenBucketLimiter;
}

const FAILURES_LIMITED = 'Too many requests without a valid API key from this address';

/** A failed authentication: takes a token of the address, then 401, or 429 when none is left. */
function failed(limits: CallerLimits, address: string, error: UnauthenticatedError): never {
  const wait = limits.failures.take(address);
  if (wait > 0) throw new RateLimitedError(wait, FAILURES_LIMITED);
  throw error;
}

/**
 * 401 without a valid key, 429 (with Retry-After) once the source address has failed too often:
 * then a key is looked up in the store no more, only a key this gateway already knows as valid
 * passes. Then the per-tenant rate limit (429 with Retry-After). The caller's principal and
 * request context.
 */
export async function callerOf(
  key: string | undefined,
  address: string,
  apiKeys: ApiKeyService,
  limits: CallerLimits,
  requestId: string,
): Promise<{ principal: Principal; ctx: RequestContext }> {
  if (!key) failed(limits, address, new UnauthenticatedError('Missing API key: send "Authorization: Bearer <key>" or "X-API-Key: <key>"'));
  // A store lookup of this request's own reserves a token, given back when the key is valid.
  let reserved = false;
  let principal: Principal | null;
  try {
    principal = await apiKeys.resolve(key, () => {
      const wait = limits.failures.take(address);
      if (wait > 0) throw new RateLimitedError(wait, FAILURES_LIMITED);
      reserved = true;
    });
  } catch (err) {
    // The store failed: no verdict on the key, so no failure of the address.
    if (reserved) limits.failures.refund(address);
    throw err;
  }
  if (!principal) {
    const invalid = new UnauthenticatedError('Invalid or revoked API key');
    if (reserved) throw invalid;
    failed(limits, address, invalid);
  }
  if (reserved) limits.failures.refund(address);
  const ctx: RequestContext = {
    tenantId: principal.tenantId,
    environmentId: principal.environmentId,
    actor: principal.keyId,
    requestId,
    permissions: principal.permissions,
  };
  const wait = limits.tenants.take(principal.tenantId);
  if (wait > 0) throw new RateLimitedError(wait);
  return { principal, ctx };
}

/** 403 when the principal lacks `permission`. */
export function assertPermitted(principal: Principal, permission: Permission): void {
  if (!hasPermission(principal.permissions, permission)) {
    throw new ForbiddenError(`This API key lacks the ${permission} permission`, { permission });
  }
}

/** `callerOf` as middleware: the request's key and source address (`sourceAddressOf`). */
export function authenticate(apiKeys: ApiKeyService, limits: CallerLimits, trustedProxyHops: number) {
  return async (req: Request, res: Response, next: NextFunction) => {
    const address = sourceAddressOf(req, trustedProxyHops);
    const { principal, ctx } = await callerOf(keyOf(req), address, apiKeys, limits, String(res.locals.requestId));
    res.locals.principal = principal;
    res.locals.ctx = ctx;
    next();
  };
}

export function requirePermission(permission: Permission) {
  return (_req: Request, res: Response, next: NextFunction) => {
    assertPermitted(principalOf(res), permission);
    next();
  };
}
