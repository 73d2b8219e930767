import type { RouteDef } from './routes';

/** Usage events and meters (issue #5). */
export const usageEventRoutes: RouteDef[] = [];
