import type { Express } from 'express';
import type { ServiceName } from '@billstream/contracts';
import { assertRoutesMounted, createHttpApp, finishApp, internalAuth, mountHealth, staticRoutes, type HttpAppOptions } from '@billstream/http';
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
}

/**
 * The internal HTTP app of a service: health probes, internal auth, routes, envelope errors.
 * Throws (the service does not start) when a registry route of the service is not mounted.
 */
export function createServiceApp({ service, logger, internalToken, ready, mount, bodyLimits }: ServiceAppOptions): Express {
  const app = createHttpApp({ logger, service, bodyLimits });
  mountHealth(app, ready);
  app.use(internalAuth(internalToken));
  app.use(staticRoutes(app));
  mount(app);
  assertRoutesMounted(app, service);
  return finishApp(app, logger);
}
