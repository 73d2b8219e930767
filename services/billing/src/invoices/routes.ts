import type { Express } from 'express';
import { invoiceApi, type InvoiceResponse } from '@billstream/contracts';
import { mountRoute } from '@billstream/http';
import type { Logger } from '@billstream/logger';
import type { InvoiceFinalizer } from './finalizer';
import type { InvoiceStore } from './store';
import type { UpcomingInvoices } from './upcoming';
import type { Db } from '@billstream/db';
import { toInvoiceView } from './view';
import { customerScope } from '../customers/hierarchy';
import type { CustomerStore } from '../customers/store';

export interface InvoiceRouteDeps {
  db: Db;
  invoices: InvoiceStore;
  finalizer: InvoiceFinalizer;
  upcoming: UpcomingInvoices;
  customers: CustomerStore;
}

export function mountInvoiceRoutes(app: Express, deps: InvoiceRouteDeps, logger: Logger): void {
  mountRoute(
    app,
    invoiceApi.listInvoices,
    async ({ query, ctx }) => {
      const page = await deps.invoices.list(deps.db, ctx, {
        customerIds: await customerScope(deps.db, deps.customers, ctx, query.customer_id, query.include_children),
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
    invoiceApi.upcomingInvoice,
    async ({ params, ctx }) => {
      const u = await deps.upcoming.of(ctx, params.id, ctx.requestId);
      const { id: _id, invoice_number: _n, available_actions: _a, finalized_at: _f, voided_at: _v, created_at: _c, updated_at: _u, ...view }: InvoiceResponse = toInvoiceView(u);
      return { ...view, as_of: u.asOf.toISOString() };
    },
    logger,
  );
}
