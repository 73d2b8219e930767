import type { Express } from 'express';
import { reservationApi } from '@billstream/contracts';
import { ValidationError } from '@billstream/errors';
import { HttpResult, mountRoute } from '@billstream/http';
import type { Logger } from '@billstream/logger';
import { exact } from '@billstream/money';
import { quotaRequestOf, type QuotaReservations } from './quota';
import type { ReservationService } from './service';
import { reservationView } from './view';

/** The public reservation routes (docs/api/reservations.md). */
export function mountReservationRoutes(app: Express, reservations: ReservationService, quotas: QuotaReservations, clock: () => Date, logger: Logger): void {
  mountRoute(
    app,
    reservationApi.create,
    async ({ body, ctx }) => {
      const customerId = await reservations.customerOf(
        ctx,
        body.customer_id !== undefined ? { customerId: body.customer_id } : { externalCustomerId: body.external_customer_id! },
      );
      if (body.feature_id !== undefined) {
        const held = await quotas.create(ctx, quotaRequestOf(customerId, body));
        return new HttpResult(reservationView(held, clock()), 201);
      }
      const r = await reservations.create(ctx, {
        customerId,
        currency: body.currency!,
        credits: body.credits === undefined ? null : exact(body.credits),
        amount: body.amount === undefined ? null : exact(body.amount),
        expiresInSeconds: body.expires_in,
        allowOverage: body.allow_overage,
        idempotencyKey: body.idempotency_key,
        metadata: body.metadata ?? {},
      });
      return new HttpResult(reservationView(r, clock()), 201);
    },
    logger,
  );

  mountRoute(app, reservationApi.get, async ({ params, ctx }) => reservationView(await reservations.get(ctx, params.id), clock()), logger);

  mountRoute(
    app,
    reservationApi.list,
    async ({ query, ctx }) => {
      const page = { limit: query.limit, offset: query.offset };
      const { items, total } = await reservations.list(ctx, { customerId: query.customer_id, status: query.status }, page);
      const now = clock();
      return { items: items.map((r) => reservationView(r, now)), pagination: { total, ...page } };
    },
    logger,
  );

  mountRoute(
    app,
    reservationApi.commit,
    async ({ params, body, ctx }) => {
      if (body.event !== undefined) return reservationView(await quotas.commitEvent(ctx, params.id, body.event), clock());
      if (body.quantity !== undefined) return reservationView(await quotas.commitQuantity(ctx, params.id, exact(body.quantity)), clock());
      if (body.credits === undefined) throw new ValidationError('credits is required', { field: 'credits' });
      const r = await reservations.commit(ctx, params.id, { credits: exact(body.credits), allowOverage: body.allow_overage });
      return reservationView(r, clock());
    },
    logger,
  );

  mountRoute(app, reservationApi.release, async ({ params, ctx }) => reservationView(await reservations.release(ctx, params.id), clock()), logger);
}
