import type { Express } from 'express';
import { walletInternalApi, type invoiceAllocationsBatchItem } from '@billstream/contracts';
import { mountRoute } from '@billstream/http';
import type { Logger } from '@billstream/logger';
import { exact } from '@billstream/money';
import type { z } from 'zod';
import type { AllocationRequest } from './domain';
import type { InvoiceCreditService } from './service';
import { allocationView, paymentView, refundsView } from './view';

/** An allocation request as the wallet reads it (the single and the batch bodies share the fields). */
function allocationRequest(body: Pick<z.output<typeof invoiceAllocationsBatchItem>, 'customer_id' | 'currency' | 'exponent' | 'lines'>): AllocationRequest {
  return {
    customerId: body.customer_id,
    currency: body.currency,
    minorDigits: body.exponent,
    lines: body.lines.map((l) => ({ id: l.id, priceType: l.price_type, amount: exact(l.amount) })),
  };
}

/**
 * The internal routes the billing service calls (not in ALL_ROUTES: the gateway does not route
 * them). Mounted like the public ones, behind the internal token and tenant headers.
 */
export function mountInvoiceRoutes(app: Express, invoices: InvoiceCreditService, logger: Logger): void {
  mountRoute(
    app,
    walletInternalApi.allocateInvoiceCredits,
    async ({ params, body, ctx }) => {
      const allocation = await invoices.allocate(ctx, params.invoice_id, allocationRequest(body), body.dry_run);
      return allocationView(allocation);
    },
    logger,
  );

  mountRoute(
    app,
    walletInternalApi.allocateInvoicesCredits,
    async ({ body, ctx }) => {
      const allocations = await invoices.allocateMany(
        ctx,
        body.invoices.map((invoice) => ({ invoiceId: invoice.invoice_id, request: allocationRequest(invoice) })),
      );
      return { allocations: allocations.map(allocationView) };
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
        minorDigits: body.exponent,
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
