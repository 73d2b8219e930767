import type { Express, Request, Response } from 'express';
import { TOPICS } from '@billstream/bus';
import { RateLimitedError } from '@billstream/errors';
import { ALL_ROUTES, DOCUMENT_RESPONSE_HEADERS, LINK_CONTEXT, type RouteDef, type ServiceName } from '@billstream/contracts';
import { migrate, pingDb } from '@billstream/db';
import { assertRoutesMounted, createHttpApp, finishApp, MiB, mountHealth, mountLeanRoute, mountRoute, parseRouteInput, portalEmailLinkKey, staticRoutes, templateResolver, type RouteRunner } from '@billstream/http';
import type { Logger } from '@billstream/logger';
import type { Service, ServiceDeps } from '@billstream/runtime';
import { apiKeyHandlers } from './api-keys/routes';
import { ApiKeyService, type EnsuredKey } from './api-keys/service';
import { ApiKeyStore } from './api-keys/store';
import { assertPermitted, authenticate, callerOf, keyOfHeaders, requirePermission, type CallerLimits } from './auth';
import { eventHandlers } from './events/routes';
import { UsageEventPublisher } from './events/publisher';
import type { GatewayHandlers } from './handlers';
import { migrations, SCHEMA } from './migrations';
import { openApiHandler, OPENAPI_PATH } from './openapi';
import { mountConsole } from './console';
import { ServiceProxy } from './proxy';
import { portalRouter } from './portal/api';
import { Owners } from './portal/owners';
import { mountPortalPage } from './portal/page';
import { portalSessionHandlers } from './portal/routes';
import { PortalSessionService } from './portal/service';
import { PortalSessionStore } from './portal/store';
import { TokenBucketLimiter } from './rate-limit';
import { sourceAddressOf } from './source-address';

export interface GatewayConfig {
  internalToken: string;
  serviceUrls: Partial<Record<ServiceName, string>>;
  /**
   * Route tables (`routeTableOf`) of services running in this process (the embedded
   * default): their routes answer directly instead of over loopback HTTP.
   */
  serviceRoutes?: Partial<Record<ServiceName, Map<string, RouteRunner>>>;
  rateLimitRps: number;
  rateLimitBurst: number;
  /** How long a resolved key is cached (default 5 s) and how many keys at most (default 10,000, least recently used dropped). */
  apiKeyCacheTtlMs?: number;
  apiKeyCacheMax?: number;
  /** Failed authentications per source address (defaults 10/s, bursts of 200): past them 429, no key lookup (ADR 0032). */
  authFailureRps?: number;
  authFailureBurst?: number;
  /** Proxies in front that append to X-Forwarded-For (default 0: the TCP peer is the source address). */
  trustedProxyHops?: number;
  bootstrap?: { key: string; tenantId: string; environmentId: string };
  /** The public address of portal session URLs (PUBLIC_BASE_URL); unset: the address a request came to. */
  publicBaseUrl?: string;
}

export interface Gateway extends Service {
  apiKeys: ApiKeyService;
}

/**
 * Whether a proxied route is also served without express for ordinary requests (ADR 0027): every
 * JSON route (the entitlement check was first, issue #14; all of them since issue #34), not an
 * upload or a streamed download.
 */
const servedLean = (def: RouteDef) => def.rawBody === undefined && def.streamsResponse === undefined;

/**
 * Logs what the start did to a key it keeps usable (the bootstrap key, the development key):
 * a restored key says what it was, a refused one why it stays as it is (ADR 0058).
 */
export function logEnsuredKey(logger: Logger, which: string, ensured: EnsuredKey): void {
  const key = { key_id: ensured.record.id, tenant_id: ensured.record.tenantId, environment_id: ensured.record.environmentId };
  if (ensured.outcome === 'restored') {
    logger.warn(`${which} restored at start: revocation lifted, permissions *`, {
      ...key,
      was_revoked_at: ensured.was.revokedAt?.toISOString() ?? null,
      was_permissions: ensured.was.permissions,
    });
  } else if (ensured.outcome === 'refused') {
    logger.error(`${which} not restored at start: ${ensured.reason}`, key);
  } else if (ensured.outcome === 'created') {
    logger.info(`${which} created at start with permissions *`, key);
  }
}

/** The public entry: authentication, tenant scoping, rate limits, validation, forwarding. */
export function createGateway({ db, bus, logger }: ServiceDeps, config: GatewayConfig): Gateway {
  const apiKeys = new ApiKeyService(db, new ApiKeyStore(), { cacheTtlMs: config.apiKeyCacheTtlMs, cacheMax: config.apiKeyCacheMax });
  const limits: CallerLimits = {
    tenants: new TokenBucketLimiter(config.rateLimitRps, config.rateLimitBurst),
    failures: new TokenBucketLimiter(config.authFailureRps ?? 10, config.authFailureBurst ?? 200),
  };
  const trustedProxyHops = config.trustedProxyHops ?? 0;
  const proxy = new ServiceProxy(config.serviceUrls, config.internalToken);
  const owners = new Owners(proxy);
  const portalSessions = new PortalSessionService(db, new PortalSessionStore(), owners);
  const handlers: GatewayHandlers = {
    ...apiKeyHandlers(apiKeys),
    ...portalSessionHandlers(portalSessions, config.publicBaseUrl),
    ...eventHandlers(new UsageEventPublisher(bus, logger)),
  };
  const ready = async () => ({ database: await pingDb(db), broker: await bus.healthy() });

  const app: Express = createHttpApp({ logger, service: 'gateway', resolveRoute: templateResolver(ALL_ROUTES), bodyLimits: [{ pathPrefix: '/v1/events/bulk', bytes: 5 * MiB }] });
  mountHealth(app, ready);
  app.get(OPENAPI_PATH, openApiHandler());
  // The console (ADR 0050): static files with a strict Content-Security-Policy, no API key.
  mountConsole(app);
  // The customer portal (ADR 0069): its page (no credential; the token is in the URL fragment) and
  // its read-only API, authenticated by a portal token and never by an API key. A session's page
  // is framed only by the origins its tenant allowed when it was opened.
  mountPortalPage(app, (id) => portalSessions.frameAncestors(id));
  app.use('/v1/portal', portalRouter(portalSessions, owners, limits, trustedProxyHops, portalEmailLinkKey(config.internalToken)));
  // Signed links (`signedLink` routes): no API key; the owner service checks the token. A source
  // address whose calls failed (401, 403, 404) too often gets 429, as for failed authentications.
  for (const def of ALL_ROUTES.filter((d) => d.signedLink)) {
    const local = config.serviceRoutes?.[def.service]?.get(def.operationId);
    app[def.method](def.path, async (req: Request, res: Response) => {
      // The document headers on every answer of a link, the gateway's own refusals (400, 429) included (ADR 0059).
      res.set(DOCUMENT_RESPONSE_HEADERS);
      const address = sourceAddressOf(req, trustedProxyHops);
      const wait = limits.failures.take(address);
      if (wait > 0) throw new RateLimitedError(wait, 'Too many failed requests from this address');
      res.on('finish', () => {
        if (res.statusCode < 400 || res.statusCode >= 500) limits.failures.refund(address);
      });
      res.locals.ctx = { ...LINK_CONTEXT, requestId: String(res.locals.requestId) };
      if (local) return local(req, res);
      parseRouteInput(def, req);
      await proxy.forward(def.service, req, res, { stream: def.streamsResponse !== undefined });
    });
  }
  app.use('/v1', authenticate(apiKeys, limits, trustedProxyHops));
  // A static route (the entitlement check, event ingestion) is reached without testing the layers before it.
  app.use(staticRoutes(app));
  // One route layer per registry route, the permission check first in it: a request walks
  // half the layers it would with the check mounted as a layer of its own.
  for (const def of ALL_ROUTES) {
    if (def.signedLink) continue;
    const permitted = requirePermission(def.permission);
    if (def.service === 'gateway') {
      const handler = handlers[def.operationId];
      if (handler) mountRoute(app, def, handler, logger, permitted);
      continue;
    }
    const service = def.service;
    const local = config.serviceRoutes?.[service]?.get(def.operationId);
    if (local) {
      // The service runs in this process: its route validates and answers this request.
      app[def.method](def.path, permitted, local);
      continue;
    }
    const upload = def.rawBody;
    if (servedLean(def)) {
      // Also served without express for ordinary requests (ADR 0027): the same checks in the same order.
      mountLeanRoute(app, { service: 'gateway', logger, limit: MiB }, {
        def,
        rivals: ALL_ROUTES,
        context: async (req, requestId) => {
          const address = sourceAddressOf(req, trustedProxyHops);
          const { principal, ctx } = await callerOf(keyOfHeaders(req.headers), address, apiKeys, limits, requestId);
          assertPermitted(principal, def.permission);
          return ctx;
        },
        answer: ({ raw, ctx, req }) => proxy.forwardLean(service, ctx, def.method.toUpperCase(), req.url ?? def.path, raw, req.headers),
      });
    }
    app[def.method](def.path, permitted, async (req: Request, res: Response) => {
      parseRouteInput(def, req);
      if (upload) await proxy.forwardUpload(service, req, res, upload.maxBytes);
      else await proxy.forward(service, req, res, { stream: def.streamsResponse !== undefined });
    });
  }
  assertRoutesMounted(app, 'gateway');
  finishApp(app, logger);

  return {
    name: 'gateway',
    schema: SCHEMA,
    migrations,
    app,
    apiKeys,
    ready,
    async start() {
      await migrate(db, SCHEMA, migrations);
      await bus.ensureTopics([TOPICS.usageEvents]);
      if (config.bootstrap) {
        const ensured = await apiKeys.ensure(config.bootstrap.key, config.bootstrap.tenantId, config.bootstrap.environmentId);
        logEnsuredKey(logger, 'BOOTSTRAP_API_KEY', ensured);
      }
    },
    async stop() {
      await proxy.close();
    },
  };
}
