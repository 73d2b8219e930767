import type { RouteDef } from './routes';
import { apiKeyRoutes } from './api-keys';
import { portalSessionRoutes } from './portal';
import { billingRoutes } from './billing';
import { customerRoutes } from './customers';
import { walletRoutes } from './wallets';
import { reservationRoutes } from './reservations';
import { usageEventRoutes } from './usage-events';
import { webhookRoutes } from './webhooks';

export * from './api-keys';
export * from './portal';
export * from './customers';
export * from './wallets';
export * from './reservations';
export * from './usage-events';
export * from './webhooks';
export * from './billing';
// Internal routes (service to service): exported for their callers and owner, never in ALL_ROUTES.
export * from './internal/wallet-invoices';
export * from './internal/event-export';
export * from './internal/usage-batch';
export * from './internal/unbilled-usage';
export * from './internal/wallet-credits';
export * from './internal/billing-payers';
export * from './internal/entitlements-snapshot';
export * from './internal/reservation-quota';

/** Every public route, in matching order. */
export const ALL_ROUTES: RouteDef[] = [
  ...apiKeyRoutes,
  ...portalSessionRoutes,
  ...customerRoutes,
  ...walletRoutes,
  ...reservationRoutes,
  ...usageEventRoutes,
  ...webhookRoutes,
  ...billingRoutes,
] as RouteDef[];
