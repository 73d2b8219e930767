import { TOPICS } from '@billstream/bus';
import type { DocumentLinksResponse, Scope } from '@billstream/contracts';
import type { Conn, Db, Trx } from '@billstream/db';
import { GoneError, NotFoundError, UnauthenticatedError, ValidationError } from '@billstream/errors';
import { newDomainEvent, writeOutbox } from '@billstream/outbox';
import type { CreditNoteStore } from '../credit-notes/store';
import type { CustomerStore } from '../customers/store';
import type { Invoice } from '../invoices/domain';
import type { FinalizedHook } from '../invoices/finalized-hook';
import type { InvoiceStore } from '../invoices/store';
import { toInvoiceView } from '../invoices/view';
import type { PaymentStore } from '../payments/store';
import type { SettingsStore } from '../settings/store';
import type { InvoiceEmails } from './emails';
import { renderHtml } from './html';
import type { DocumentLinks, LinkSet } from './links';
import { addressLines, type Buyer, type DocumentModel, type PaymentEntry } from './model';
import { renderPdf } from './pdf';
import type { DocumentSnapshot, DocumentStore } from './store';

export interface DocumentServiceDeps {
  db: Db;
  documents: DocumentStore;
  invoices: InvoiceStore;
  payments: PaymentStore;
  creditNotes: CreditNoteStore;
  customers: CustomerStore;
  settings: SettingsStore;
  links: DocumentLinks;
  clock: () => Date;
  published: () => void;
  /** Invoice email (ADR 0067): recorded in the finalization's and the trigger's transactions. */
  emails?: InvoiceEmails;
}

/** Every payment and credit note of one invoice is far fewer than this. */
const ALL = 1000;

const notFound = (id: string) => new NotFoundError(`Invoice ${id} not found`, { field: 'id', invoice_id: id });

/**
 * Invoice documents and communication (docs/api/invoice-documents.md, ADR 0045). The PDF is rendered
 * once, from what the finalizing transaction snapshotted (the invoice, its payments, the seller,
 * the buyer), and served as stored ever after; the HTML is rendered on each request from the
 * invoice as it is now (the parties from the snapshot). Signed links open one invoice's
 * documents without an API key.
 */
export class DocumentService implements FinalizedHook {
  constructor(private readonly deps: DocumentServiceDeps) {}

  // FinalizedHook: the finalizer's calls. A draft's links were never revoked: generation 0, no read.
  async links(invoice: Invoice): Promise<{ hostedInvoiceUrl: string; invoicePdfUrl: string }> {
    const { hostedInvoiceUrl, invoicePdfUrl } = this.deps.links.urls(invoice, 0, this.deps.links.expiryOf(invoice.dueDate, this.deps.clock()));
    return { hostedInvoiceUrl, invoicePdfUrl };
  }

  async inTransaction(trx: Trx, invoices: Invoice[]): Promise<void> {
    await this.snapshot(trx, invoices);
    await this.deps.emails?.record(trx, invoices, { kind: 'finalization' });
  }

  /** GET /v1/invoices/{id}/pdf. */
  async pdf(scope: Scope, id: string): Promise<Buffer> {
    return this.pdfOf(await this.issued(scope, id));
  }

  /** GET /v1/invoices/{id}/html. */
  async html(scope: Scope, id: string): Promise<string> {
    return this.htmlOf(await this.issued(scope, id));
  }

  /** GET /v1/hosted/invoices/{id}/pdf?token=. */
  async pdfByLink(id: string, token: string): Promise<Buffer> {
    return this.pdfOf(await this.linked(id, token));
  }

  /** GET /v1/hosted/invoices/{id}?token=. */
  async htmlByLink(id: string, token: string): Promise<string> {
    return this.htmlOf(await this.linked(id, token));
  }

  /**
   * POST /v1/invoices/{id}/document_links (ADR 0059): new links, signed with the invoice's current
   * generation, valid until the later of the due date and now plus the TTL; they become the
   * invoice's `hosted_invoice_url` and `invoice_pdf_url`. The invoice's row is locked meanwhile, so
   * a revocation at the same time cannot leave revoked links on it.
   */
  async newLinks(scope: Scope, id: string): Promise<DocumentLinksResponse> {
    await this.issued(scope, id);
    const links = await this.deps.db.transaction(async (trx) => {
      const invoice = (await this.deps.invoices.lockRow(trx, id))!;
      const made = this.deps.links.urls(invoice, await this.deps.documents.generationOf(trx, id), this.deps.links.expiryOf(invoice.dueDate, this.deps.clock()));
      await this.deps.invoices.setDocumentLinks(trx, id, made, this.deps.clock());
      return made;
    });
    return { hosted_invoice_url: links.hostedInvoiceUrl, invoice_pdf_url: links.invoicePdfUrl, expires_at: links.expiresAt.toISOString() };
  }

  /** DELETE /v1/invoices/{id}/document_links (ADR 0059): every link made before answers 410; the invoice's links become null. */
  async revokeLinks(scope: Scope, id: string): Promise<void> {
    await this.issued(scope, id);
    await this.deps.db.transaction(async (trx) => {
      const invoice = (await this.deps.invoices.lockRow(trx, id))!;
      await this.deps.documents.revoke(trx, invoice, this.deps.clock());
      await this.deps.invoices.setDocumentLinks(trx, id, null, this.deps.clock());
    });
  }

  /**
   * POST /v1/invoices/{id}/communications/trigger: one `invoice.communication.triggered` event
   * through the outbox (per idempotency key: the same key answers the first call's event) and,
   * when the tenant's email is on, the email of that event in the same transaction (ADR 0067).
   */
  async trigger(scope: Scope & { actor: string }, id: string, idempotencyKey: string | undefined): Promise<{ event_id: string }> {
    const invoice = await this.deps.invoices.get(this.deps.db, scope, id);
    if (!invoice) throw notFound(id);
    if (idempotencyKey) {
      const known = await this.deps.documents.getCommunication(this.deps.db, id, idempotencyKey);
      if (known) return { event_id: known };
    }
    if (invoice.status === 'draft' || invoice.status === 'voided') {
      throw new ValidationError(`Cannot send an invoice that is ${invoice.status}`, { field: 'status', status: invoice.status, invoice_id: id });
    }
    const links = await this.linksToSend(invoice);
    const customer = await this.deps.customers.getById(this.deps.db, invoice.customerId);
    const snapshot = await this.deps.documents.getById(this.deps.db, id);
    const view = { ...toInvoiceView(invoice), hosted_invoice_url: links.hostedInvoiceUrl, invoice_pdf_url: links.invoicePdfUrl };
    const event = newDomainEvent('invoice.communication.triggered', scope, {
      invoice: view,
      communication: {
        links: { hosted_invoice_url: links.hostedInvoiceUrl, invoice_pdf_url: links.invoicePdfUrl },
        recipient_email: customer?.details?.email ?? snapshot?.buyer.email ?? null,
      },
    });
    const eventId = await this.deps.db.transaction(async (trx) => {
      if (idempotencyKey && !(await this.deps.documents.insertCommunication(trx, id, idempotencyKey, event.id, this.deps.clock()))) {
        return (await this.deps.documents.getCommunication(trx, id, idempotencyKey))!;
      }
      await writeOutbox(trx, TOPICS.billingEvents, id, event);
      await this.deps.emails?.record(trx, [invoice], { kind: 'communication', eventId: event.id, hostedInvoiceUrl: links.hostedInvoiceUrl });
      return event.id;
    });
    if (eventId === event.id) {
      this.deps.published();
      this.deps.emails?.recorded();
    }
    return { event_id: eventId };
  }

  /** A finalized, paid or voided invoice of the scope (404 otherwise; a draft: 400). */
  private async issued(scope: Scope, id: string): Promise<Invoice> {
    const invoice = await this.deps.invoices.get(this.deps.db, scope, id);
    if (!invoice) throw notFound(id);
    if (invoice.status === 'draft') {
      throw new ValidationError('A draft has no document: finalize it first', { field: 'status', status: invoice.status, invoice_id: id });
    }
    return invoice;
  }

  /**
   * The invoice a signed link names, when its token is that invoice's (401 otherwise, never the
   * document), of its current generation (410 once revoked) and not expired (410).
   */
  private async linked(id: string, token: string): Promise<Invoice> {
    const invoice = await this.deps.invoices.getById(this.deps.db, id);
    const verified = invoice && invoice.status !== 'draft' ? this.deps.links.verify(id, invoice, token) : undefined;
    if (!invoice || !verified) throw new UnauthenticatedError('The link is not valid for this invoice');
    if (verified.generation < (await this.deps.documents.generationOf(this.deps.db, id))) {
      throw new GoneError('This link was revoked: ask the seller for a new one', { reason: 'revoked' });
    }
    if (verified.expiresAt.getTime() <= this.deps.clock().getTime()) {
      throw new GoneError(`This link expired on ${verified.expiresAt.toISOString().slice(0, 10)}: ask the seller for a new one`, { reason: 'expired', expired_at: verified.expiresAt.toISOString() });
    }
    return invoice;
  }

  /** The links a communication carries: the invoice's own while they are valid, else new ones (not stored). */
  private async linksToSend(invoice: Invoice): Promise<Omit<LinkSet, 'expiresAt'>> {
    const generation = await this.deps.documents.generationOf(this.deps.db, invoice.id);
    const stored = this.deps.links.verifyUrl(invoice.id, invoice, invoice.hostedInvoiceUrl);
    if (invoice.hostedInvoiceUrl && invoice.invoicePdfUrl && stored && stored.generation === generation && stored.expiresAt > this.deps.clock()) {
      return { hostedInvoiceUrl: invoice.hostedInvoiceUrl, invoicePdfUrl: invoice.invoicePdfUrl };
    }
    return this.deps.links.urls(invoice, generation, this.deps.links.expiryOf(invoice.dueDate, this.deps.clock()));
  }

  private async pdfOf(invoice: Invoice): Promise<Buffer> {
    const snapshot = await this.snapshotOf(invoice);
    if (snapshot.pdf) return snapshot.pdf;
    const pdf = await renderPdf({ invoice: snapshot.invoice, seller: snapshot.seller, buyer: snapshot.buyer, payments: snapshot.payments, creditNotes: [] });
    // Two first requests at once render the same bytes; the first stored is kept.
    return this.deps.documents.savePdf(this.deps.db, invoice.id, pdf, this.deps.clock());
  }

  private async htmlOf(invoice: Invoice): Promise<string> {
    const snapshot = await this.snapshotOf(invoice);
    const [payments, notes] = await Promise.all([
      this.deps.payments.list(this.deps.db, invoice, { invoiceId: invoice.id, limit: ALL, offset: 0 }),
      this.deps.creditNotes.list(this.deps.db, invoice, { invoiceId: invoice.id, limit: ALL, offset: 0 }),
    ]);
    const model: DocumentModel = {
      invoice: toInvoiceView(invoice),
      seller: snapshot.seller,
      buyer: snapshot.buyer,
      payments: payments.items.filter((p) => p.paymentStatus !== 'failed').map(paymentEntry),
      creditNotes: notes.items.map((n) => ({ number: n.number, date: n.createdAt.toISOString(), reason: n.reason, amount: n.amount, tax: n.taxAmount, total: n.total, status: n.status })),
    };
    return renderHtml(model);
  }

  /**
   * The finalization's snapshot; an invoice finalized before documents existed gets one now
   * (the seller and buyer as they are now), once.
   */
  private async snapshotOf(invoice: Invoice): Promise<DocumentSnapshot> {
    const found = await this.deps.documents.getById(this.deps.db, invoice.id);
    if (found) return found;
    await this.snapshot(this.deps.db, [invoice]);
    return (await this.deps.documents.getById(this.deps.db, invoice.id))!;
  }

  /**
   * Snapshots invoices of one tenant and environment (a finalized chunk of the period job, or
   * one invoice) in a fixed number of statements: the settings, the buyers and the succeeded
   * payments read at once, the snapshots inserted in one statement.
   */
  private async snapshot(conn: Conn, invoices: Invoice[]): Promise<void> {
    if (invoices.length === 0) return;
    const first = invoices[0]!;
    const scope = { tenantId: first.tenantId, environmentId: first.environmentId };
    if (invoices.some((i) => i.tenantId !== scope.tenantId || i.environmentId !== scope.environmentId)) throw new Error('document snapshots of one tenant and environment at a time');
    // One after the other: on a transaction's one connection, concurrent queries only queue.
    const settings = await this.deps.settings.get(conn, scope);
    const customers = await this.deps.customers.getByIds(conn, [...new Set(invoices.map((i) => i.customerId))]);
    const payments = await this.deps.payments.succeededOf(conn, invoices.map((i) => i.id));
    const now = this.deps.clock();
    await this.deps.documents.insertMany(
      conn,
      invoices.map((invoice) => {
        const customer = customers.get(invoice.customerId);
        const buyer: Buyer = {
          id: invoice.customerId,
          external_id: customer?.externalId ?? null,
          name: customer?.details?.name ?? null,
          email: customer?.details?.email ?? null,
          address: addressLines(customer?.details?.address ?? null),
        };
        return {
          invoiceId: invoice.id,
          tenantId: invoice.tenantId,
          environmentId: invoice.environmentId,
          invoice: toInvoiceView(invoice),
          seller: settings.invoiceSettings,
          buyer,
          payments: (payments.get(invoice.id) ?? []).map(paymentEntry),
          createdAt: now,
        };
      }),
    );
  }
}

function paymentEntry(p: { createdAt: Date; paymentMethodType: string; reference: string | null; providerReference: string | null; amount: number; paymentStatus: string }): PaymentEntry {
  return { date: p.createdAt.toISOString(), method: p.paymentMethodType, reference: p.reference ?? p.providerReference, amount: p.amount, status: p.paymentStatus };
}
