import type { Trx } from '@billstream/db';
import type { Invoice } from '../invoices/domain';

/** What asked for an invoice email: its finalization, or one `communications/trigger` (its event). */
export type EmailCause = { kind: 'finalization' } | { kind: 'communication'; eventId: string; hostedInvoiceUrl: string | null };

/**
 * The port documents/ records invoice email through (ADR 0067), in the transaction it already
 * writes in (the finalization's snapshot, the trigger's outbox event); communications/ implements it.
 */
export interface InvoiceEmails {
  record(trx: Trx, invoices: Invoice[], cause: EmailCause): Promise<void>;
  /** After the commit: the sender looks now rather than at its next poll. */
  recorded(): void;
}
