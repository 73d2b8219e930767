import type { NextFunction, Request, Response } from 'express';
import type { Permission } from '@billstream/contracts';
import { ForbiddenError, RateLimitedError, UnauthenticatedError } from '@billstream/errors';
import type { RequestContext } from '@billstream/http';
import { hasPermission, type ApiKeyService, type Principal } from './api-keys/service';
import type { TokenBucketLimiter } from './rate-limit';

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** The key of a request: `Authorization: Bearer` wins over `X-API-Key` when both are sent. */
export function keyOf(req: Request): string | undefined {
  const authorization = req.header('authorization');
  if (authorization) return BEARER.exec(authorization)?.[1];
  return req.header('x-api-key')?.trim() || undefined;
}

export function principalOf(res: Response): Principal {
  return res.locals.principal as Principal;
}

/** 401 without a valid key; then the per-tenant rate limit (429 with Retry-After). */
export function authenticate(apiKeys: ApiKeyService, limiter: TokenBucketLimiter) {
  return async (req: Request, res: Response, next: NextFunction) => {
    const key = keyOf(req);
    if (!key) throw new UnauthenticatedError('Missing API key: send "Authorization: Bearer <key>" or "X-API-Key: <key>"');
    const principal = await apiKeys.resolve(key);
    if (!principal) throw new UnauthenticatedError('Invalid or revoked API key');
    res.locals.principal = principal;
    const ctx: RequestContext = {
      tenantId: principal.tenantId,
      environmentId: principal.environmentId,
      actor: principal.keyId,
      requestId: String(res.locals.requestId),
    };
    res.locals.ctx = ctx;
    const wait = limiter.take(principal.tenantId);
    if (wait > 0) throw new RateLimitedError(wait);
    next();
  };
}

export function requirePermission(permission: Permission) {
  return (_req: Request, res: Response, next: NextFunction) => {
    if (!hasPermission(principalOf(res).permissions, permission)) {
      throw new ForbiddenError(`This API key lacks the ${permission} permission`, { permission });
    }
    next();
  };
}
