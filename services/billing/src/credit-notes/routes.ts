import type { Express } from 'express';
import { creditNoteApi, type Scope } from '@billstream/contracts';
import { mountRoute } from '@billstream/http';
import type { Logger } from '@billstream/logger';
import type { CreditNoteService } from './service';
import { toCreditNoteView } from './view';
import { newCreditNoteOf } from './wire';

export function mountCreditNoteRoutes(app: Express, notes: CreditNoteService, logger: Logger, customers: (scope: Scope, customerId: string | undefined, includeChildren: boolean | undefined) => Promise<string[] | undefined>): void {
  mountRoute(app, creditNoteApi.createCreditNote, async ({ body, ctx }) => toCreditNoteView(await notes.create(ctx, newCreditNoteOf(body))), logger);
  mountRoute(
    app,
    creditNoteApi.listCreditNotes,
    async ({ query, ctx }) => {
      const customerIds = await customers(ctx, query.customer_id, query.include_children);
      const page = await notes.list(ctx, { invoiceId: query.invoice_id, customerIds, status: query.status, limit: query.limit, offset: query.offset });
      return { items: page.items.map(toCreditNoteView), pagination: { total: page.total, limit: query.limit, offset: query.offset } };
    },
    logger,
  );
  mountRoute(app, creditNoteApi.getCreditNote, async ({ params, ctx }) => toCreditNoteView(await notes.get(ctx, params.id)), logger);
  mountRoute(app, creditNoteApi.voidCreditNote, async ({ params, ctx }) => toCreditNoteView(await notes.void(ctx, params.id)), logger);
}
