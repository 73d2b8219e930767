import type { Express } from 'express';
import { walletCreditsInternalApi } from '@billstream/contracts';
import { mountRoute } from '@billstream/http';
import type { Logger } from '@billstream/logger';
import { exact } from '@billstream/money';
import { entryView } from '../entries/view';
import { parseTimestamp } from '../wallets/input';
import type { CustomerCreditService } from './service';

/** `POST /internal/v1/credits` (not in ALL_ROUTES: the gateway does not route it), behind the internal token like the invoice routes. */
export function mountCustomerCreditRoutes(app: Express, credits: CustomerCreditService, logger: Logger): void {
  mountRoute(
    app,
    walletCreditsInternalApi.creditCustomer,
    async ({ body, ctx }) => {
      const made = await credits.credit(ctx, {
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
      });
      return { wallet_id: made.walletId, wallet_created: made.walletCreated, replayed: made.replayed, transaction: entryView(made.entry) };
    },
    logger,
  );
}
