import type { Express } from 'express';
import { walletCreditsInternalApi, type InternalCreditBody } from '@billstream/contracts';
import { mountRoute } from '@billstream/http';
import type { Logger } from '@billstream/logger';
import { exact } from '@billstream/money';
import { entryView } from '../entries/view';
import { parseTimestamp } from '../wallets/input';
import type { CustomerCreditBatch } from './batch';
import type { CustomerCredit, CustomerCreditOutcome, CustomerCreditRequest } from './domain';
import type { CustomerCreditService } from './service';

function requestOf(body: InternalCreditBody): CustomerCreditRequest {
  return {
    customerId: body.customer_id,
    currency: body.currency,
    credits: body.credits === undefined ? null : exact(body.credits),
    amount: body.amount === undefined ? null : exact(body.amount),
    reason: body.transaction_reason,
    expiryDate: body.expiry_date ? parseTimestamp(body.expiry_date) : null,
    priority: body.priority,
    description: body.description,
    idempotencyKey: body.idempotency_key,
    newWallet: { conversionRate: exact(body.wallet.conversion_rate), allowedPriceTypes: body.wallet.allowed_price_types },
  };
}

const creditView = (made: CustomerCredit) => ({ wallet_id: made.walletId, wallet_created: made.walletCreated, replayed: made.replayed, transaction: entryView(made.entry) });

function outcomeView(key: string, o: CustomerCreditOutcome) {
  if (o.status === 'credited') return { status: 'credited' as const, idempotency_key: key, ...creditView(o.credit) };
  return { status: 'refused' as const, idempotency_key: key, reason: o.reason, field: o.field, message: o.message };
}

/**
 * `POST /internal/v1/credits` and `POST /internal/v1/credits/batch` (not in ALL_ROUTES: the
 * gateway does not route them), behind the internal token like the invoice routes.
 */
export function mountCustomerCreditRoutes(app: Express, credits: CustomerCreditService, batch: CustomerCreditBatch, logger: Logger): void {
  mountRoute(
    app,
    walletCreditsInternalApi.creditCustomer,
    async ({ body, ctx }) => {
      return creditView(await credits.credit(ctx, requestOf(body)));
    },
    logger,
  );
  mountRoute(
    app,
    walletCreditsInternalApi.creditCustomers,
    async ({ body, ctx }) => {
      const outcomes = await batch.creditMany(ctx, body.credits.map(requestOf));
      return { results: outcomes.map((o, i) => outcomeView(body.credits[i].idempotency_key, o)) };
    },
    logger,
  );
}
