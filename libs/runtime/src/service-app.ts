import type { Express } from 'express';
import { createHttpApp, finishApp, internalAuth, mountHealth, type HttpAppOptions } from '@billstream/http';
import type { Logger } from '@billstream/logger';

export interface ServiceAppOptions {
  logger: Logger;
  internalToken: string;
  ready(): Promise<Record<string, boolean>>;
  /** Mounts the service's routes (behind the internal-token check). */
  mount(app: Express): void;
  bodyLimits?: HttpAppOptions['bodyLimits'];
}

/** The internal HTTP app of a service: health probes, internal auth, routes, envelope errors. */
export function createServiceApp({ logger, internalToken, ready, mount, bodyLimits }: ServiceAppOptions): Express {
  const app = createHttpApp({ logger, bodyLimits });
  mountHealth(app, ready);
  app.use(internalAuth(internalToken));
  mount(app);
  return finishApp(app, logger);
}
