import type { Express } from 'express';
import { walletApi, walletInternalApi } from '@billstream/contracts';
import { mountRoute } from '@billstream/http';
import type { Logger } from '@billstream/logger';
import { exact } from '@billstream/money';
import { parseTimestamp } from '../wallets/input';
import type { EntryService } from './service';
import { entryView } from './view';

export function mountEntryRoutes(app: Express, entries: EntryService, logger: Logger): void {
  mountRoute(
    app,
    walletApi.topup,
    async ({ params, body, ctx }) => {
      const { entry } = await entries.topup(ctx, params.id, {
        credits: exact(body.credits_to_add),
        reason: body.transaction_reason,
        expiryDate: body.expiry_date_utc ? parseTimestamp(body.expiry_date_utc) : null,
        priority: body.priority ?? null,
        description: body.description ?? null,
        idempotencyKey: body.idempotency_key ?? null,
      });
      return entryView(entry);
    },
    logger,
  );

  mountRoute(
    app,
    walletApi.debit,
    async ({ params, body, ctx }) => {
      const { entry } = await entries.debit(ctx, params.id, {
        credits: exact(body.credits),
        reason: body.transaction_reason,
        description: body.description ?? null,
        idempotencyKey: body.idempotency_key ?? null,
      });
      return entryView(entry);
    },
    logger,
  );

  mountRoute(
    app,
    walletApi.settle,
    async ({ params, body, ctx }) => entryView(await entries.settle(ctx, params.id, params.transaction_id, body.status)),
    logger,
  );

  // The billing service's (not routed by the gateway): an invoiced top-up's credit, its invoice paid or voided.
  mountRoute(
    app,
    walletInternalApi.settleInvoicedCredit,
    async ({ params, body, ctx }) => entryView(await entries.settleInvoiced(ctx, params.id, params.transaction_id, body.status)),
    logger,
  );

  mountRoute(
    app,
    walletApi.listTransactions,
    async ({ params, query, ctx }) => {
      const filter = {
        type: query.type,
        status: query.transaction_status,
        reason: query.transaction_reason,
        limit: query.limit,
        offset: query.offset,
      };
      const { items, total } = await entries.list(ctx, params.id, filter);
      return { items: items.map(entryView), pagination: { total, limit: query.limit, offset: query.offset } };
    },
    logger,
  );
}
