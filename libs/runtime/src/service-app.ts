import type { Express } from 'express';
import { ALL_ROUTES, type ServiceName } from '@billstream/contracts';
import {
  assertRoutesMounted,
  createHttpApp,
  finishApp,
  handlerTableOf,
  internalAuth,
  internalContextOf,
  leanAnswerOf,
  MiB,
  mountHealth,
  mountLeanRoute,
  staticRoutes,
  type HttpAppOptions,
} from '@billstream/http';
import type { Logger } from '@billstream/logger';

export interface ServiceAppOptions {
  /** Whose routes these are: every registry route of this service must be mounted. */
  service: ServiceName;
  logger: Logger;
  internalToken: string;
  ready(): Promise<Record<string, boolean>>;
  /** Mounts the service's routes (behind the internal-token check). */
  mount(app: Express): void;
  bodyLimits?: HttpAppOptions['bodyLimits'];
  /**
   * Routes (operationIds, mounted with `mountRoute` alone, JSON in and out, handlers that use
   * only the validated input and the context, not `req` or `res`) also served without express
   * for ordinary requests (ADR 0027): the service's hot path.
   */
  lean?: string[];
}

/**
 * The internal HTTP app of a service: health probes, internal auth, routes, envelope errors.
 * Throws (the service does not start) when a registry route of the service is not mounted.
 */
export function createServiceApp({ service, logger, internalToken, ready, mount, bodyLimits, lean = [] }: ServiceAppOptions): Express {
  const app = createHttpApp({ logger, service, bodyLimits });
  mountHealth(app, ready);
  app.use(internalAuth(internalToken));
  app.use(staticRoutes(app));
  mount(app);
  assertRoutesMounted(app, service);
  for (const operationId of lean) {
    const mounted = handlerTableOf(app).get(operationId);
    if (!mounted || mounted.def.rawBody || mounted.def.streamsResponse || bodyLimits?.some((l) => mounted.def.path.startsWith(l.pathPrefix))) {
      throw new Error(`${service}: ${operationId} cannot be served lean (not mounted with mountRoute alone, not JSON in and out, or a body limit of its own)`);
    }
    const { def, handler } = mounted;
    mountLeanRoute(app, { service, logger, limit: MiB }, {
      def,
      rivals: ALL_ROUTES.filter((r) => r.service === service),
      context: (req, requestId) => internalContextOf(req.headers, internalToken, requestId),
      answer: (input) => leanAnswerOf(def, handler, logger, input),
    });
  }
  return finishApp(app, logger);
}
