import { z } from 'zod';
import { defineRoute, type RouteDef } from '../routes';

/**
 * Invoice documents and communication (docs/api/invoice-documents.md, ADR 0045): the PDF frozen at
 * finalization, the live HTML, the signed links of `hosted_invoice_url` and `invoice_pdf_url`,
 * and the `invoice.communication.triggered` event for the client's mailer.
 */
const idParams = z.strictObject({ id: z.string().min(1).max(255) });
const noQuery = z.strictObject({});
const linkQuery = z.strictObject({
  token: z.string().min(1, 'must not be empty').max(128, 'must be at most 128 characters').meta({ description: "The signed link's token (HMAC of the invoice, tenant and environment)" }),
});
const tag = 'Invoice documents';

export const triggerCommunicationBody = z
  .strictObject({
    idempotency_key: z.string().min(1, 'must not be empty').max(255, 'must be at most 255 characters').optional(),
  })
  .meta({ examples: [{ idempotency_key: 'send-inv-2026-11-0001' }] });
export type TriggerCommunicationBody = z.output<typeof triggerCommunicationBody>;

export const communicationTriggeredSchema = z
  .object({ event_id: z.string().meta({ description: 'The id of the `invoice.communication.triggered` event written (the same for the same idempotency key)' }) })
  .meta({ id: 'CommunicationTriggered' });

export const documentApi = {
  getInvoicePdf: defineRoute({
    operationId: 'getInvoicePdf',
    method: 'get',
    path: '/v1/invoices/:id/pdf',
    service: 'billing',
    permission: 'invoices:read',
    summary: 'The issued PDF of a finalized, paid or voided invoice: made from what was known at finalization, the same bytes on every request (drafts: 400)',
    tag,
    params: idParams,
    query: noQuery,
    status: 200,
    errors: [404],
    streamsResponse: { contentTypes: ['application/pdf'] },
  }),
  getInvoiceHtml: defineRoute({
    operationId: 'getInvoiceHtml',
    method: 'get',
    path: '/v1/invoices/:id/html',
    service: 'billing',
    permission: 'invoices:read',
    summary: 'The invoice as a self-contained printable HTML page, as it is now: paid, VOID, payments, credit notes (drafts: 400)',
    tag,
    params: idParams,
    query: noQuery,
    status: 200,
    errors: [404],
    streamsResponse: { contentTypes: ['text/html'] },
  }),
  getHostedInvoice: defineRoute({
    operationId: 'getHostedInvoice',
    method: 'get',
    path: '/v1/hosted/invoices/:id',
    service: 'billing',
    permission: 'invoices:read',
    summary: "The invoice's HTML page by its signed link (`hosted_invoice_url`): no API key; a wrong token: 401",
    tag,
    params: idParams,
    query: linkQuery,
    status: 200,
    errors: [404],
    streamsResponse: { contentTypes: ['text/html'] },
    signedLink: true,
  }),
  getHostedInvoicePdf: defineRoute({
    operationId: 'getHostedInvoicePdf',
    method: 'get',
    path: '/v1/hosted/invoices/:id/pdf',
    service: 'billing',
    permission: 'invoices:read',
    summary: "The invoice's PDF by its signed link (`invoice_pdf_url`): no API key; a wrong token: 401",
    tag,
    params: idParams,
    query: linkQuery,
    status: 200,
    errors: [404],
    streamsResponse: { contentTypes: ['application/pdf'] },
    signedLink: true,
  }),
  triggerInvoiceCommunication: defineRoute({
    operationId: 'triggerInvoiceCommunication',
    method: 'post',
    path: '/v1/invoices/:id/communications/trigger',
    service: 'billing',
    permission: 'invoices:write',
    summary: "Ask the client's mailer to send the invoice: writes an `invoice.communication.triggered` event with its links and recipient; the same idempotency key answers the same event (draft or voided: 400)",
    tag,
    params: idParams,
    body: triggerCommunicationBody,
    response: communicationTriggeredSchema,
    status: 202,
    errors: [404],
  }),
};

export const documentRoutes: RouteDef[] = Object.values(documentApi) as RouteDef[];
