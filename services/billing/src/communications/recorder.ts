import type { Trx } from '@billstream/db';
import { newId } from '@billstream/ids';
import type { CustomerStore } from '../customers/store';
import type { EmailCause, InvoiceEmails } from '../documents/emails';
import type { Invoice } from '../invoices/domain';
import type { SettingsStore } from '../settings/store';
import type { EmailStore, InvoiceEmail } from './store';

/** Message-IDs are the communication's id at the sender's domain: a resend after a crash is the same message. */
export function messageIdOf(id: string, from: string): string {
  const domain = from.slice(from.lastIndexOf('@') + 1) || 'billstream.invalid';
  return `<${id}@${domain}>`;
}

export const NO_RECIPIENT = 'Not sent: the customer has no email address';

/**
 * Records one email per invoice and cause when the tenant's `email.enabled` (ADR 0067), with the
 * addresses of that moment, in a fixed number of statements (the settings, the buyers, one
 * insert). A cause recorded before (a repeated finalization, a concurrent call) is kept: one
 * email per (invoice, trigger). A buyer without an email is recorded `failed`, saying so.
 */
export class EmailRecorder implements InvoiceEmails {
  constructor(
    private readonly deps: { emails: EmailStore; settings: SettingsStore; customers: CustomerStore; clock: () => Date; poke: () => void },
  ) {}

  async record(trx: Trx, invoices: Invoice[], cause: EmailCause): Promise<void> {
    if (invoices.length === 0) return;
    const first = invoices[0]!;
    const { email } = await this.deps.settings.get(trx, { tenantId: first.tenantId, environmentId: first.environmentId });
    if (!email.enabled || !email.from) return;
    const from = email.from;
    const customers = await this.deps.customers.getByIds(trx, invoices.map((i) => i.customerId));
    const now = this.deps.clock();
    const rows: InvoiceEmail[] = invoices.map((invoice) => {
      const id = newId('invoiceCommunication');
      const recipient = customers.get(invoice.customerId)?.details?.email ?? null;
      return {
        id,
        tenantId: invoice.tenantId,
        environmentId: invoice.environmentId,
        invoiceId: invoice.id,
        trigger: cause.kind,
        triggerId: cause.kind === 'finalization' ? 'finalization' : cause.eventId,
        status: recipient ? 'pending' : 'failed',
        recipient,
        sender: from,
        replyTo: email.reply_to,
        bcc: email.bcc,
        hostedInvoiceUrl: cause.kind === 'finalization' ? invoice.hostedInvoiceUrl : cause.hostedInvoiceUrl,
        attempts: 0,
        lastResponse: recipient ? null : NO_RECIPIENT,
        nextAttemptAt: recipient ? now : null,
        messageId: messageIdOf(id, from),
        createdAt: now,
        updatedAt: now,
        sentAt: null,
      };
    });
    await this.deps.emails.insertMany(trx, rows);
  }

  recorded(): void {
    this.deps.poke();
  }
}
