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
  token: z
    .string()
    .min(1, 'must not be empty')
    .max(128, 'must be at most 128 characters')
    .meta({ description: "The signed link's token: its expiry, the invoice's link generation and their HMAC with the invoice, tenant and environment (ADR 0059)" }),
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

export const documentLinksSchema = z
  .object({
    hosted_invoice_url: z.string().meta({ description: "The invoice's HTML page, opened without an API key" }),
    invoice_pdf_url: z.string().meta({ description: "The invoice's PDF, opened without an API key" }),
    expires_at: z.string().meta({ description: 'When both links stop working (410): the later of the due date and now, plus DOCUMENT_LINK_TTL_DAYS_AFTER_DUE days' }),
  })
  .meta({ id: 'InvoiceDocumentLinks' });
export type DocumentLinksResponse = z.output<typeof documentLinksSchema>;

export const invoiceCommunicationSchema = z
  .object({
    id: z.string().meta({ description: 'The communication (`icomm_`); its email carries the Message-ID `<{id}@{domain of from}>`' }),
    invoice_id: z.string(),
    channel: z.literal('email'),
    trigger: z.enum(['finalization', 'communication']).meta({ description: 'What asked for it: the finalization, or a `communications/trigger` call' }),
    event_id: z.string().nullable().meta({ description: 'The `invoice.communication.triggered` event of a `communication` trigger (null for the finalization)' }),
    status: z.enum(['pending', 'sent', 'failed']).meta({ description: 'pending: not sent yet (retried with backoff while the SMTP server refuses or is down); sent: the server accepted it; failed: the last attempt failed, or no recipient' }),
    recipient: z.string().nullable().meta({ description: "The customer's email at the trigger (null: none, the communication is failed)" }),
    attempts: z.number().int().meta({ description: 'Attempts made (started) so far' }),
    last_response: z.string().nullable().meta({ description: "The SMTP server's last answer (its reply line), or why there was none" }),
    next_attempt_at: z.string().nullable().meta({ description: 'When a pending communication is attempted next' }),
    created_at: z.string(),
    updated_at: z.string(),
    sent_at: z.string().nullable(),
  })
  .meta({ id: 'InvoiceCommunication' });
export type InvoiceCommunicationResponse = z.output<typeof invoiceCommunicationSchema>;

export const invoiceCommunicationListSchema = z.object({ items: z.array(invoiceCommunicationSchema) }).meta({ id: 'InvoiceCommunicationList' });
export type InvoiceCommunicationListResponse = z.output<typeof invoiceCommunicationListSchema>;

/**
 * The answers every document response carries (ADR 0059), errors of the signed links included:
 * the page runs nothing, is framed nowhere, is never sniffed as another type, sends no referrer.
 */
export const DOCUMENT_RESPONSE_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; img-src https:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'private, no-store',
};

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
    summary: "The invoice's HTML page by its signed link (`hosted_invoice_url`): no API key; a wrong token: 401; an expired or revoked link: 410",
    tag,
    params: idParams,
    query: linkQuery,
    status: 200,
    errors: [404, 410],
    streamsResponse: { contentTypes: ['text/html'] },
    signedLink: true,
  }),
  getHostedInvoicePdf: defineRoute({
    operationId: 'getHostedInvoicePdf',
    method: 'get',
    path: '/v1/hosted/invoices/:id/pdf',
    service: 'billing',
    permission: 'invoices:read',
    summary: "The invoice's PDF by its signed link (`invoice_pdf_url`): no API key; a wrong token: 401; an expired or revoked link: 410",
    tag,
    params: idParams,
    query: linkQuery,
    status: 200,
    errors: [404, 410],
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
  listInvoiceCommunications: defineRoute({
    operationId: 'listInvoiceCommunications',
    method: 'get',
    path: '/v1/invoices/:id/communications',
    service: 'billing',
    permission: 'invoices:read',
    summary: "The invoice's emails (ADR 0067), oldest first: one per finalization and per `communications/trigger` while the tenant's `email.enabled`, with status (pending, sent, failed), attempts and the SMTP server's last answer",
    tag,
    params: idParams,
    query: noQuery,
    response: invoiceCommunicationListSchema,
    status: 200,
    errors: [404],
  }),
  createInvoiceDocumentLinks: defineRoute({
    operationId: 'createInvoiceDocumentLinks',
    method: 'post',
    path: '/v1/invoices/:id/document_links',
    service: 'billing',
    permission: 'invoices:write',
    summary: "New signed links to the invoice's documents, valid until the later of its due date and now plus DOCUMENT_LINK_TTL_DAYS_AFTER_DUE days; they become the invoice's `hosted_invoice_url` and `invoice_pdf_url` (draft: 400)",
    tag,
    params: idParams,
    body: z.strictObject({}),
    response: documentLinksSchema,
    status: 201,
    errors: [404],
  }),
  revokeInvoiceDocumentLinks: defineRoute({
    operationId: 'revokeInvoiceDocumentLinks',
    method: 'delete',
    path: '/v1/invoices/:id/document_links',
    service: 'billing',
    permission: 'invoices:write',
    summary: "Revoke every signed link given out for the invoice: they answer 410 from then on; the invoice's `hosted_invoice_url` and `invoice_pdf_url` become null until new links are made",
    tag,
    params: idParams,
    status: 204,
    errors: [404],
  }),
};

export const documentRoutes: RouteDef[] = Object.values(documentApi) as RouteDef[];
