import type { IncomingHttpHeaders } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import type { Permission } from '@billstream/contracts';
import { ForbiddenError, RateLimitedError, UnauthenticatedError } from '@billstream/errors';
import type { RequestContext } from '@billstream/http';
import { hasPermission, type ApiKeyService, type Principal } from './api-keys/service';
import type { TokenBucketLimiter } from './rate-limit';

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

/**
 * 401 without a valid key; then the per-tenant rate limit (429 with Retry-After). The caller's
 * principal and request context.
 */
export async function callerOf(key: string | undefined, apiKeys: ApiKeyService, limiter: TokenBucketLimiter, requestId: string): Promise<{ principal: Principal; ctx: RequestContext }> {
  if (!key) throw new UnauthenticatedError('Missing API key: send "Authorization: Bearer <key>" or "X-API-Key: <key>"');
  const principal = await apiKeys.resolve(key);
  if (!principal) throw new UnauthenticatedError('Invalid or revoked API key');
  const ctx: RequestContext = { tenantId: principal.tenantId, environmentId: principal.environmentId, actor: principal.keyId, requestId };
  const wait = limiter.take(principal.tenantId);
  if (wait > 0) throw new RateLimitedError(wait);
  return { principal, ctx };
}

/** 403 when the principal lacks `permission`. */
export function assertPermitted(principal: Principal, permission: Permission): void {
  if (!hasPermission(principal.permissions, permission)) {
    throw new ForbiddenError(`This API key lacks the ${permission} permission`, { permission });
  }
}

/** 401 without a valid key; then the per-tenant rate limit (429 with Retry-After). */
export function authenticate(apiKeys: ApiKeyService, limiter: TokenBucketLimiter) {
  return async (req: Request, res: Response, next: NextFunction) => {
    const { principal, ctx } = await callerOf(keyOf(req), apiKeys, limiter, String(res.locals.requestId));
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
