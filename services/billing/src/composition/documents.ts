/**
 * Invoice documents' composition (ADR 0045): the finalizer sets the signed links and snapshots
 * what the PDF shows. The links' key: DOCUMENT_LINK_SECRET, or derived from the internal token
 * (ADR 0059), never kept in the database.
 */
import type { InvoiceEmails } from '../documents/emails';
import { DocumentLinks, documentLinkKey } from '../documents/links';
import { DocumentService } from '../documents/service';
import type { CompositionBase } from './base';
import type { BillingStores } from './stores';

export function composeDocuments({ db, clock, published, settings }: CompositionBase, { stores, internalToken, emails }: { stores: BillingStores; internalToken: string; emails: InvoiceEmails }): DocumentService {
  const links = new DocumentLinks(settings.publicBaseUrl, documentLinkKey(settings.documentLinkSecret, internalToken), settings.documentLinkTtlDays);
  return new DocumentService({
    db,
    documents: stores.documents,
    invoices: stores.invoices,
    payments: stores.payments,
    creditNotes: stores.creditNotes,
    customers: stores.customers,
    settings: stores.settings,
    links,
    clock,
    published,
    emails,
  });
}
