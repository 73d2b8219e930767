import type { Express } from 'express';
import { invoiceApi } from '@billstream/contracts';
import { mountRoute } from '@billstream/http';
import type { Logger } from '@billstream/logger';
import type { PeriodJob } from '../renewals/period-job';
import type { InvoiceFinalizer } from './finalizer';
import type { InvoiceStore } from './store';
import type { Db } from '@billstream/db';
import { toInvoiceView } from './view';

export interface InvoiceRouteDeps {
  db: Db;
  invoices: InvoiceStore;
  finalizer: InvoiceFinalizer;
  periods: PeriodJob;
}

export function mountInvoiceRoutes(app: Express, deps: InvoiceRouteDeps, logger: Logger): void {
  mountRoute(
    app,
    invoiceApi.listInvoices,
    async ({ query, ctx }) => {
      const page = await deps.invoices.list(deps.db, ctx, {
        customerId: query.customer_id,
        subscriptionId: query.subscription_id,
        status: query.status,
        limit: query.limit,
        offset: query.offset,
      });
      return { items: page.items.map(toInvoiceView), pagination: { total: page.total, limit: query.limit, offset: query.offset } };
    },
    logger,
  );
  mountRoute(app, invoiceApi.getInvoice, async ({ params, ctx }) => toInvoiceView(await deps.finalizer.get(ctx, params.id)), logger);
  mountRoute(
    app,
    invoiceApi.finalizeInvoice,
    async ({ params, ctx }) => toInvoiceView(await deps.finalizer.finalizeNow(ctx, params.id, ctx.requestId)),
    logger,
  );
  mountRoute(
    app,
    invoiceApi.voidInvoice,
    async ({ params, ctx }) => toInvoiceView(await deps.finalizer.void(ctx, params.id, ctx.requestId, ctx.actor)),
    logger,
  );
  mountRoute(
    app,
    invoiceApi.billSubscriptions,
    // The caller's tenant and environment only (ADR 0035): the counts are theirs.
    async ({ ctx }) => {
      const r = await deps.periods.runOnce({ tenantId: ctx.tenantId, environmentId: ctx.environmentId });
      return {
        invoices_created: r.invoices_created,
        subscriptions_billed: r.subscriptions_billed,
        invoices_finalized: r.invoices_finalized,
        invoices_marked_overdue: r.invoices_marked_overdue,
      };
    },
    logger,
  );
}
