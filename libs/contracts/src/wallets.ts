import type { RouteDef } from './routes';

/** Wallet API (issue #4). */
export const walletRoutes: RouteDef[] = [];
