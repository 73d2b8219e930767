import type { RouteDef } from './routes';

/** Webhook endpoints and deliveries (issue #6). */
export const webhookRoutes: RouteDef[] = [];
