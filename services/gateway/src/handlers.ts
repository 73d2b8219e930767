import type { RouteDef } from '@billstream/contracts';
import type { RouteHandler } from '@billstream/http';

/** Handlers of the routes the gateway answers itself, by operationId. */
export type GatewayHandlers = Record<string, RouteHandler<RouteDef>>;
