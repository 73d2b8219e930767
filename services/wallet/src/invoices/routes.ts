import type { Express } from 'express';
import { walletInternalApi } from '@billstream/contracts';
import { mountRoute } from '@billstream/http';
import type { Logger } from '@billstream/logger';
import { exact } from '@billstream/money';
import type { InvoiceCreditService } from './service';
import { allocationView, paymentView, refundsView } from './view';

/**
 * The internal routes the billing service calls (not in ALL_ROUTES: the gateway does not route
 * them). Mounted like the public ones, behind the internal token and tenant headers.
 */
export function mountInvoiceRoutes(app: Express, invoices: InvoiceCreditService, logger: Logger): void {
  mountRoute(
    app,
    walletInternalApi.allocateInvoiceCredits,
    async ({ params, body, ctx }) => {
      const allocation = await invoices.allocate(ctx, params.invoice_id, {
        customerId: body.customer_id,
        currency: body.currency,
        exponent: body.exponent,
        lines: body.lines.map((l) => ({ id: l.id, priceType: l.price_type, amount: exact(l.amount) })),
      }, body.dry_run);
      return allocationView(allocation);
    },
    logger,
  );

  mountRoute(
    app,
    walletInternalApi.payInvoice,
    async ({ params, body, ctx }) => {
      const payment = await invoices.pay(ctx, params.invoice_id, {
        paymentId: body.payment_id,
        walletId: body.wallet_id,
        customerId: body.customer_id,
        currency: body.currency,
        exponent: body.exponent,
        amount: exact(body.amount),
      });
      return paymentView(payment);
    },
    logger,
  );

  mountRoute(
    app,
    walletInternalApi.refundInvoice,
    async ({ params, ctx }) => refundsView(await invoices.refund(ctx, params.invoice_id)),
    logger,
  );
}
