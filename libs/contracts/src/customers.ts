import type { RouteDef } from './routes';

/** Customer API (issue #3). */
export const customerRoutes: RouteDef[] = [];
