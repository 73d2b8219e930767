import type { Express } from 'express';
import { reservationApi } from '@billstream/contracts';
import { ValidationError } from '@billstream/errors';
import { HttpResult, mountRoute } from '@billstream/http';
import type { Logger } from '@billstream/logger';
import { exact } from '@billstream/money';
import type { ReservationService } from './service';
import { reservationView } from './view';

/** The public reservation routes (docs/api/reservations.md). */
export function mountReservationRoutes(app: Express, reservations: ReservationService, clock: () => Date, logger: Logger): void {
  mountRoute(
    app,
    reservationApi.create,
    async ({ body, ctx }) => {
      const customerId = await reservations.customerOf(
        ctx,
        body.customer_id !== undefined ? { customerId: body.customer_id } : { externalCustomerId: body.external_customer_id! },
      );
      const r = await reservations.create(ctx, {
        customerId,
        currency: body.currency,
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
      if (body.event !== undefined) {
        throw new ValidationError('A commit by usage event is not supported yet: commit by credits', { field: 'event' });
      }
      if (body.credits === undefined) throw new ValidationError('credits is required', { field: 'credits' });
      const r = await reservations.commit(ctx, params.id, { credits: exact(body.credits), allowOverage: body.allow_overage });
      return reservationView(r, clock());
    },
    logger,
  );

  mountRoute(app, reservationApi.release, async ({ params, ctx }) => reservationView(await reservations.release(ctx, params.id), clock()), logger);
}
