import type { Express } from 'express';
import { invoiceApi, type InvoiceResponse } from '@billstream/contracts';
import { mountRoute } from '@billstream/http';
import type { Logger } from '@billstream/logger';
import type { PaymentService } from './service';
import type { UpcomingInvoices } from '../invoices/upcoming';
import { toInvoiceView, toPaymentView } from '../invoices/view';

export function mountPaymentRoutes(app: Express, payments: PaymentService, upcoming: UpcomingInvoices, logger: Logger): void {
  mountRoute(app, invoiceApi.createPayment, async ({ body, ctx }) => toPaymentView(await payments.create(ctx, body, ctx.requestId)), logger);
  mountRoute(
    app,
    invoiceApi.listPayments,
    async ({ query, ctx }) => {
      const page = await payments.list(ctx, { invoiceId: query.invoice_id, limit: query.limit, offset: query.offset });
      return { items: page.items.map(toPaymentView), pagination: { total: page.total, limit: query.limit, offset: query.offset } };
    },
    logger,
  );
  mountRoute(
    app,
    invoiceApi.upcomingInvoice,
    async ({ params, ctx }) => {
      const u = await upcoming.of(ctx, params.id, ctx.requestId);
      const { id: _id, invoice_number: _n, finalized_at: _f, voided_at: _v, created_at: _c, updated_at: _u, ...view }: InvoiceResponse = toInvoiceView(u);
      return { ...view, as_of: u.asOf.toISOString() };
    },
    logger,
  );
}
