import type { Request, Response } from 'express';
import type { Scope } from '@billstream/contracts';
import type { Logger } from '@billstream/logger';

/** Who is calling, set by the gateway from the API key and passed to services in headers. */
export interface RequestContext extends Scope {
  /** The API key id (or `system`) that made the call. */
  actor: string;
  requestId: string;
}

export const INTERNAL_HEADERS = {
  token: 'x-internal-token',
  tenant: 'x-tenant-id',
  environment: 'x-environment-id',
  actor: 'x-actor-id',
  requestId: 'x-request-id',
} as const;

export function requestIdOf(res: Response): string {
  return String(res.locals.requestId ?? '');
}

export function loggerOf(res: Response, fallback: Logger): Logger {
  return (res.locals.logger as Logger | undefined) ?? fallback;
}

export function contextOf(res: Response): RequestContext {
  const ctx = res.locals.ctx as RequestContext | undefined;
  if (!ctx) throw new Error('request context missing: route mounted without authentication');
  return ctx;
}

export type { Request, Response };
