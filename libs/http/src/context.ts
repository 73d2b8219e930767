import type { Request, Response } from 'express';
import type { Permission, Scope } from '@billstream/contracts';
import { ForbiddenError } from '@billstream/errors';
import type { Logger } from '@billstream/logger';

/** Who is calling, set by the gateway from the API key and passed to services in headers. */
export interface RequestContext extends Scope {
  /** The API key id (or `system`) that made the call. */
  actor: string;
  requestId: string;
  /**
   * The permissions of the calling API key, when a key made the call (the gateway passes them);
   * absent for a service's own call. A route whose need depends on its input (a task's entity,
   * ADR 0058) checks them with `assertContextPermits`.
   */
  permissions?: readonly string[];
}

export const INTERNAL_HEADERS = {
  token: 'x-internal-token',
  tenant: 'x-tenant-id',
  environment: 'x-environment-id',
  actor: 'x-actor-id',
  requestId: 'x-request-id',
  /** The calling key's permissions, comma-separated (`RequestContext.permissions`). */
  permissions: 'x-api-key-permissions',
} as const;

/**
 * 403 when the call's key lacks `permission` (as the gateway's check of a route's own
 * permission, `details.permission` naming it); a call without key permissions (a service's
 * own) passes.
 */
export function assertContextPermits(ctx: RequestContext, permission: Permission): void {
  const held = ctx.permissions;
  if (held === undefined || held.includes('*') || held.includes(permission)) return;
  throw new ForbiddenError(`This API key lacks the ${permission} permission`, { permission });
}

/** Whether the call's key holds `permission` (`assertContextPermits` without the error). */
export function contextPermits(ctx: RequestContext, permission: Permission): boolean {
  const held = ctx.permissions;
  return held === undefined || held.includes('*') || held.includes(permission);
}

export function requestIdOf(res: Response): string {
  return String(res.locals.requestId ?? '');
}

/** What `createHttpApp` keeps in `res.locals` for the request's logger (`loggerOf`). */
interface LoggerLocals {
  requestId?: string;
  /** The app's logger, the parent of the request's. */
  appLogger?: Logger;
  /** The request's logger, made on first use: most requests never log. */
  logger?: Logger;
}

/**
 * The request's logger: a child of the app's logger with the request id, made on first use;
 * `fallback` for a response that did not pass `createHttpApp`'s middleware.
 */
export function loggerOf(res: Response, fallback: Logger): Logger {
  const locals = res.locals as LoggerLocals;
  if (locals.logger) return locals.logger;
  if (!locals.appLogger || locals.requestId === undefined) return fallback;
  return (locals.logger = locals.appLogger.child({ requestId: locals.requestId }));
}

export function contextOf(res: Response): RequestContext {
  const ctx = res.locals.ctx as RequestContext | undefined;
  if (!ctx) throw new Error('request context missing: route mounted without authentication');
  return ctx;
}

export type { Request, Response };
