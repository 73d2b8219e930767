import type { Express } from 'express';
import { documentApi, type InvoiceCommunicationResponse, type Scope } from '@billstream/contracts';
import type { Db } from '@billstream/db';
import { NotFoundError } from '@billstream/errors';
import { mountRoute } from '@billstream/http';
import type { Logger } from '@billstream/logger';
import type { InvoiceStore } from '../invoices/store';
import type { EmailStore, InvoiceEmail } from './store';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** An email row on the wire (docs/api/invoice-documents.md). */
export function toCommunicationView(e: InvoiceEmail): InvoiceCommunicationResponse {
  return {
    id: e.id,
    invoice_id: e.invoiceId,
    channel: 'email',
    trigger: e.trigger,
    event_id: e.trigger === 'communication' ? e.triggerId : null,
    status: e.status,
    recipient: e.recipient,
    attempts: e.attempts,
    last_response: e.lastResponse,
    next_attempt_at: e.status === 'pending' ? iso(e.nextAttemptAt) : null,
    created_at: e.createdAt.toISOString(),
    updated_at: e.updatedAt.toISOString(),
    sent_at: iso(e.sentAt),
  };
}

/** `GET /v1/invoices/{id}/communications`: the invoice's emails (ADR 0067); another scope's invoice is 404. */
export async function listCommunications(deps: { db: Db; invoices: InvoiceStore; emails: EmailStore }, scope: Scope, id: string): Promise<{ items: InvoiceCommunicationResponse[] }> {
  const invoice = await deps.invoices.get(deps.db, scope, id);
  if (!invoice) throw new NotFoundError(`Invoice ${id} not found`, { field: 'id', invoice_id: id });
  return { items: (await deps.emails.listOf(deps.db, id)).map(toCommunicationView) };
}

export function mountCommunicationRoutes(app: Express, deps: { db: Db; invoices: InvoiceStore; emails: EmailStore }, logger: Logger): void {
  mountRoute(app, documentApi.listInvoiceCommunications, async ({ params, ctx }) => listCommunications(deps, ctx, params.id), logger);
}
