import type { z } from 'zod';
import type { Permission } from './common';

/** The services, named as their packages (`@billstream/<name>`, `services/<name>`). */
export const SERVICE_NAMES = ['gateway', 'customer', 'wallet', 'ingestion-aggregator', 'webhook-dispatcher', 'billing', 'entitlements'] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number];
export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/**
 * One public endpoint: who owns it, what permission it needs, and the zod schemas of its
 * input and output. The gateway validates and forwards by it, the owning service mounts
 * its handler by it, and the OpenAPI document is generated from it.
 */
export interface RouteDef<
  P extends z.ZodType = z.ZodType,
  Q extends z.ZodType = z.ZodType,
  B extends z.ZodType = z.ZodType,
  R extends z.ZodType = z.ZodType,
> {
  operationId: string;
  method: HttpMethod;
  /** Express-style path, e.g. `/v1/customers/:id`. */
  path: string;
  service: ServiceName;
  permission: Permission;
  summary: string;
  tag: string;
  params?: P;
  query?: Q;
  body?: B;
  response?: R;
  /** Status of a success: 200, 201, 202 or 204. */
  status: 200 | 201 | 202 | 204;
  /** Error statuses this endpoint documents beyond 400/401/403/429/500. */
  errors?: number[];
  /** Largest accepted JSON body, default 1 MiB. */
  bodyLimitBytes?: number;
  /**
   * The body is a file, not JSON: no JSON parser reads it (any Content-Type), the owning
   * service streams it, and the gateway forwards it as a stream up to `maxBytes` (413 beyond).
   */
  rawBody?: { maxBytes: number };
  /** The answer is a file streamed by the owning service (no JSON response schema). */
  streamsResponse?: { contentTypes: string[] };
  /**
   * A signed link's route: no API key. The caller shows the `token` query parameter of a link
   * the owner service signed; the gateway forwards the call without a tenant (`LINK_CONTEXT`)
   * and the owner service checks the token and answers only the one resource it names.
   */
  signedLink?: true;
  /**
   * A route of the portal API (ADR 0069), answered by the gateway itself and never in
   * `ALL_ROUTES`: `token`, authenticated by a portal session's token, never an API key (its
   * `permission` is the one that opens sessions, not checked on the call); `link`, the exchange of
   * an invoice email's signed portal link, without a token.
   */
  portal?: 'token' | 'link';
}

/** The request context of a `signedLink` route's call: no tenant; the owner service finds it from the token's resource. */
export const LINK_CONTEXT = { tenantId: '-', environmentId: '-', actor: 'signed-link' } as const;

/** A route; without a `response` schema its response type is `never` (a 204 answers nothing). */
export function defineRoute<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType, R extends z.ZodType = never>(
  def: RouteDef<P, Q, B, R>,
): RouteDef<P, Q, B, R> {
  return def;
}

export type InputOf<T extends z.ZodType | undefined> = [Exclude<T, undefined>] extends [z.ZodType]
  ? z.output<Exclude<T, undefined>>
  : undefined;
