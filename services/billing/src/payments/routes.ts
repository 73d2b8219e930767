import type { Express } from 'express';
import { invoiceApi } from '@billstream/contracts';
import { mountRoute } from '@billstream/http';
import type { Logger } from '@billstream/logger';
import type { PaymentService } from './service';
import { toPaymentView } from './view';
import { newPaymentOf, paymentFailedOf, paymentSucceededOf } from './wire';

export function mountPaymentRoutes(app: Express, payments: PaymentService, logger: Logger): void {
  mountRoute(app, invoiceApi.createPayment, async ({ body, ctx }) => toPaymentView(await payments.create(ctx, newPaymentOf(body), ctx.requestId)), logger);
  mountRoute(
    app,
    invoiceApi.listPayments,
    async ({ query, ctx }) => {
      const page = await payments.list(ctx, { invoiceId: query.invoice_id, limit: query.limit, offset: query.offset });
      return { items: page.items.map(toPaymentView), pagination: { total: page.total, limit: query.limit, offset: query.offset } };
    },
    logger,
  );
  mountRoute(app, invoiceApi.succeedPayment, async ({ params, body, ctx }) => toPaymentView(await payments.succeed(ctx, params.id, paymentSucceededOf(body), ctx.requestId)), logger);
  mountRoute(app, invoiceApi.failPayment, async ({ params, body, ctx }) => toPaymentView(await payments.fail(ctx, params.id, paymentFailedOf(body))), logger);
}
