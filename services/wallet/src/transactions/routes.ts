import type { Express } from 'express';
import { walletApi } from '@billstream/contracts';
import { mountRoute } from '@billstream/http';
import type { Logger } from '@billstream/logger';
import { exact } from '@billstream/money';
import { parseTimestamp } from '../wallets/input';
import type { TransactionService } from './service';
import { transactionView } from './view';

export function mountTransactionRoutes(app: Express, transactions: TransactionService, logger: Logger): void {
  mountRoute(
    app,
    walletApi.topup,
    async ({ params, body, ctx }) => {
      const { transaction } = await transactions.topup(ctx, params.id, {
        credits: exact(body.credits_to_add),
        reason: body.transaction_reason,
        expiryDate: body.expiry_date_utc ? parseTimestamp(body.expiry_date_utc) : null,
        priority: body.priority ?? null,
        description: body.description ?? null,
        idempotencyKey: body.idempotency_key ?? null,
      });
      return transactionView(transaction);
    },
    logger,
  );

  mountRoute(
    app,
    walletApi.debit,
    async ({ params, body, ctx }) => {
      const { transaction } = await transactions.debit(ctx, params.id, {
        credits: exact(body.credits),
        reason: body.transaction_reason,
        description: body.description ?? null,
        idempotencyKey: body.idempotency_key ?? null,
      });
      return transactionView(transaction);
    },
    logger,
  );

  mountRoute(
    app,
    walletApi.settle,
    async ({ params, body, ctx }) => transactionView(await transactions.settle(ctx, params.id, params.transaction_id, body.status)),
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
      const { items, total } = await transactions.list(ctx, params.id, filter);
      return { items: items.map(transactionView), pagination: { total, limit: query.limit, offset: query.offset } };
    },
    logger,
  );
}
