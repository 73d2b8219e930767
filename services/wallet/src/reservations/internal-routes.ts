import type { Express } from 'express';
import { walletHeldQuantityInternalApi } from '@billstream/contracts';
import type { Db } from '@billstream/db';
import { mountRoute } from '@billstream/http';
import type { Logger } from '@billstream/logger';
import { toDecimalString } from '@billstream/money';
import type { ReservationStore } from './store';

/** `POST /internal/v1/reservations/held-quantity`: what the entitlement check counts as `held` (ADR 0070). */
export function mountHeldQuantityRoute(app: Express, db: Db, store: ReservationStore, clock: () => Date, logger: Logger): void {
  mountRoute(
    app,
    walletHeldQuantityInternalApi.held,
    async ({ body, ctx }) => ({ held: toDecimalString(await store.heldQuantity(db, ctx, body.customer_id, body.feature_id, clock())) }),
    logger,
  );
}
