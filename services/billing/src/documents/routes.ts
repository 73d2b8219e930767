import type { Express, Response } from 'express';
import { documentApi } from '@billstream/contracts';
import { HttpResult, mountRoute } from '@billstream/http';
import type { Logger } from '@billstream/logger';
import type { DocumentService } from './service';

/** A document answered whole: its type, length, and no caching by shared caches (a signed link is a secret). */
function send(res: Response, type: string, body: Buffer | string, filename?: string): void {
  res.status(200).set({
    'content-type': type,
    'cache-control': 'private, no-store',
    ...(filename ? { 'content-disposition': `inline; filename="${filename}"` } : {}),
  });
  res.send(body);
}

const pdfName = (id: string) => `invoice-${id.replace(/[^A-Za-z0-9_-]/g, '_')}.pdf`;

export function mountDocumentRoutes(app: Express, documents: DocumentService, logger: Logger): void {
  mountRoute(app, documentApi.getInvoicePdf, async ({ params, ctx, res }) => send(res, 'application/pdf', await documents.pdf(ctx, params.id), pdfName(params.id)), logger);
  mountRoute(app, documentApi.getInvoiceHtml, async ({ params, ctx, res }) => send(res, 'text/html; charset=utf-8', await documents.html(ctx, params.id)), logger);
  mountRoute(app, documentApi.getHostedInvoicePdf, async ({ params, query, res }) => send(res, 'application/pdf', await documents.pdfByLink(params.id, query.token), pdfName(params.id)), logger);
  mountRoute(app, documentApi.getHostedInvoice, async ({ params, query, res }) => send(res, 'text/html; charset=utf-8', await documents.htmlByLink(params.id, query.token)), logger);
  mountRoute(
    app,
    documentApi.triggerInvoiceCommunication,
    async ({ params, body, ctx }) => new HttpResult(await documents.trigger(ctx, params.id, body.idempotency_key), 202),
    logger,
  );
}
