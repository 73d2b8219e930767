import { customerRoutes, webhookRoutes } from '@billstream/contracts';
import { mountRoute, routeTableOf } from '@billstream/http';
import { createLogger } from '@billstream/logger';
import { createServiceApp } from './service-app';

const logger = createLogger({ service: 'test', level: 'silent' });
const ready = async () => ({});
const noop = async () => undefined;

describe('createServiceApp: a service mounts every route the registry gives it', () => {
  it('builds the app when every route of the service is mounted', () => {
    const app = createServiceApp({
      service: 'customer',
      logger,
      internalToken: 'token',
      ready,
      mount: (a) => customerRoutes.forEach((def) => mountRoute(a, def, noop, logger)),
    });
    expect([...routeTableOf(app).keys()].sort()).toEqual(customerRoutes.map((d) => d.operationId).sort());
  });

  it('refuses to start with one route not mounted, naming it with its method and path', () => {
    const [forgotten, ...mounted] = customerRoutes;
    const start = () =>
      createServiceApp({
        service: 'customer',
        logger,
        internalToken: 'token',
        ready,
        mount: (a) => mounted.forEach((def) => mountRoute(a, def, noop, logger)),
      });
    expect(start).toThrow(
      `customer does not mount 1 route(s) the registry gives it: ${forgotten.operationId} (${forgotten.method.toUpperCase()} ${forgotten.path}); refusing to start`,
    );
  });

  it("does not count another service's routes", () => {
    const start = () =>
      createServiceApp({
        service: 'webhook-dispatcher',
        logger,
        internalToken: 'token',
        ready,
        mount: (a) => customerRoutes.forEach((def) => mountRoute(a, def, noop, logger)),
      });
    expect(start).toThrow(`webhook-dispatcher does not mount ${webhookRoutes.length} route(s)`);
  });
});
