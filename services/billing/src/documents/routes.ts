import type { Express, Request, Response } from 'express';
import { DOCUMENT_RESPONSE_HEADERS, documentApi } from '@billstream/contracts';
import { errorResponse, HttpResult, mountRoute } from '@billstream/http';
import type { Logger } from '@billstream/logger';
import { renderLinkError } from './html';
import type { DocumentService } from './service';

/**
 * A document answered whole: its type, length, and the document headers (ADR 0059): no caching by
 * shared caches (a signed link is a secret), a CSP that runs nothing and frames nowhere, nosniff, no referrer.
 */
function send(res: Response, type: string, body: Buffer | string, filename?: string): void {
  res.status(200).set({
    ...DOCUMENT_RESPONSE_HEADERS,
    'content-type': type,
    ...(filename ? { 'content-disposition': `inline; filename="${filename}"` } : {}),
  });
  res.send(body);
}

const pdfName = (id: string) => `invoice-${id.replace(/[^A-Za-z0-9_-]/g, '_')}.pdf`;

/**
 * A signed link's answer: the document, or, for a browser (it accepts HTML before JSON), a 4xx as
 * a short page that says what happened (expired, revoked, not valid); any other client gets the
 * error envelope.
 */
async function byLink(req: Request, res: Response, logger: Logger, answer: () => Promise<void>): Promise<void> {
  try {
    await answer();
  } catch (err) {
    res.set(DOCUMENT_RESPONSE_HEADERS);
    if (req.accepts(['application/json', 'text/html']) !== 'text/html') throw err;
    const { status, body, headers } = errorResponse(err, logger);
    res.status(status).set(headers);
    if (status >= 500) res.json(body);
    else res.set('content-type', 'text/html; charset=utf-8').send(renderLinkError(status, body.error.message));
  }
}

export function mountDocumentRoutes(app: Express, documents: DocumentService, logger: Logger): void {
  mountRoute(app, documentApi.getInvoicePdf, async ({ params, ctx, res }) => send(res, 'application/pdf', await documents.pdf(ctx, params.id), pdfName(params.id)), logger);
  mountRoute(app, documentApi.getInvoiceHtml, async ({ params, ctx, res }) => send(res, 'text/html; charset=utf-8', await documents.html(ctx, params.id)), logger);
  mountRoute(
    app,
    documentApi.getHostedInvoicePdf,
    async ({ params, query, req, res }) => byLink(req, res, logger, async () => send(res, 'application/pdf', await documents.pdfByLink(params.id, query.token), pdfName(params.id))),
    logger,
  );
  mountRoute(
    app,
    documentApi.getHostedInvoice,
    async ({ params, query, req, res }) => byLink(req, res, logger, async () => send(res, 'text/html; charset=utf-8', await documents.htmlByLink(params.id, query.token))),
    logger,
  );
  mountRoute(app, documentApi.createInvoiceDocumentLinks, async ({ params, ctx }) => new HttpResult(await documents.newLinks(ctx, params.id), 201), logger);
  mountRoute(app, documentApi.revokeInvoiceDocumentLinks, async ({ params, ctx }) => documents.revokeLinks(ctx, params.id), logger);
  mountRoute(
    app,
    documentApi.triggerInvoiceCommunication,
    async ({ params, body, ctx }) => new HttpResult(await documents.trigger(ctx, params.id, body.idempotency_key), 202),
    logger,
  );
}
