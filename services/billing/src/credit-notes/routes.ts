import type { Express } from 'express';
import { creditNoteApi } from '@billstream/contracts';
import { mountRoute } from '@billstream/http';
import type { Logger } from '@billstream/logger';
import type { CreditNoteService } from './service';
import { toCreditNoteView } from './view';

export function mountCreditNoteRoutes(app: Express, notes: CreditNoteService, logger: Logger): void {
  mountRoute(app, creditNoteApi.createCreditNote, async ({ body, ctx }) => toCreditNoteView(await notes.create(ctx, body)), logger);
  mountRoute(
    app,
    creditNoteApi.listCreditNotes,
    async ({ query, ctx }) => {
      const page = await notes.list(ctx, { invoiceId: query.invoice_id, customerId: query.customer_id, status: query.status, limit: query.limit, offset: query.offset });
      return { items: page.items.map(toCreditNoteView), pagination: { total: page.total, limit: query.limit, offset: query.offset } };
    },
    logger,
  );
  mountRoute(app, creditNoteApi.getCreditNote, async ({ params, ctx }) => toCreditNoteView(await notes.get(ctx, params.id)), logger);
  mountRoute(app, creditNoteApi.voidCreditNote, async ({ params, ctx }) => toCreditNoteView(await notes.void(ctx, params.id)), logger);
}
