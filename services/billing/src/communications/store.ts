import type { Conn, Db } from '@billstream/db';

export type EmailStatus = 'pending' | 'sent' | 'failed';
export type EmailTrigger = 'finalization' | 'communication';

/** One invoice email: a row of `invoice_emails` (ADR 0067). */
export interface InvoiceEmail {
  id: string;
  tenantId: string;
  environmentId: string;
  invoiceId: string;
  trigger: EmailTrigger;
  /** 'finalization', or the id of the `invoice.communication.triggered` event. */
  triggerId: string;
  status: EmailStatus;
  recipient: string | null;
  sender: string;
  replyTo: string | null;
  bcc: string | null;
  hostedInvoiceUrl: string | null;
  attempts: number;
  lastResponse: string | null;
  nextAttemptAt: Date | null;
  messageId: string;
  createdAt: Date;
  updatedAt: Date;
  sentAt: Date | null;
}

interface Row {
  id: string;
  tenant_id: string;
  environment_id: string;
  invoice_id: string;
  trigger: EmailTrigger;
  trigger_id: string;
  status: EmailStatus;
  recipient: string | null;
  sender: string;
  reply_to: string | null;
  bcc: string | null;
  hosted_invoice_url: string | null;
  attempts: number;
  last_response: string | null;
  next_attempt_at: Date | null;
  message_id: string;
  created_at: Date;
  updated_at: Date;
  sent_at: Date | null;
}

const fromRow = (r: Row): InvoiceEmail => ({
  id: r.id,
  tenantId: r.tenant_id,
  environmentId: r.environment_id,
  invoiceId: r.invoice_id,
  trigger: r.trigger,
  triggerId: r.trigger_id,
  status: r.status,
  recipient: r.recipient,
  sender: r.sender,
  replyTo: r.reply_to,
  bcc: r.bcc,
  hostedInvoiceUrl: r.hosted_invoice_url,
  attempts: r.attempts,
  lastResponse: r.last_response,
  nextAttemptAt: r.next_attempt_at,
  messageId: r.message_id,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  sentAt: r.sent_at,
});

/** A server's answer kept on the row: one line, at most this long. */
const RESPONSE_CHARS = 1000;
const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim().slice(0, RESPONSE_CHARS);

/** `invoice_emails` (migration 024). */
export class EmailStore {
  /** Records emails in one statement; a (invoice, trigger) recorded before is kept as it is. */
  async insertMany(conn: Conn, emails: InvoiceEmail[]): Promise<void> {
    if (emails.length === 0) return;
    await conn('invoice_emails')
      .insert(
        emails.map((e) => ({
          id: e.id,
          tenant_id: e.tenantId,
          environment_id: e.environmentId,
          invoice_id: e.invoiceId,
          trigger: e.trigger,
          trigger_id: e.triggerId,
          status: e.status,
          recipient: e.recipient,
          sender: e.sender,
          reply_to: e.replyTo,
          bcc: e.bcc,
          hosted_invoice_url: e.hostedInvoiceUrl,
          attempts: e.attempts,
          last_response: e.lastResponse,
          next_attempt_at: e.nextAttemptAt,
          message_id: e.messageId,
          created_at: e.createdAt,
          updated_at: e.updatedAt,
          sent_at: e.sentAt,
        })),
      )
      .onConflict(['invoice_id', 'trigger_id'])
      .ignore();
  }

  /** An invoice's emails, oldest first. */
  async listOf(conn: Conn, invoiceId: string): Promise<InvoiceEmail[]> {
    const rows = (await conn('invoice_emails').where({ invoice_id: invoiceId }).orderBy([{ column: 'created_at' }, { column: 'id' }])) as Row[];
    return rows.map(fromRow);
  }

  /**
   * Claims up to `limit` pending emails whose attempt is due, in one short transaction: rows
   * another sender holds are skipped (FOR UPDATE SKIP LOCKED); each claimed row counts the
   * attempt and is kept off other senders until `leaseUntil` (a sender that dies mid-send
   * leaves it to be sent again then, with the same Message-ID).
   */
  async claim(db: Db, now: Date, leaseUntil: Date, limit: number): Promise<InvoiceEmail[]> {
    return db.transaction(async (trx) => {
      const due = (await trx('invoice_emails')
        .where({ status: 'pending' })
        .where('next_attempt_at', '<=', now)
        .orderBy('next_attempt_at')
        .limit(limit)
        .forUpdate()
        .skipLocked()
        .select('id')) as Array<{ id: string }>;
      if (due.length === 0) return [];
      const rows = (await trx('invoice_emails')
        .whereIn(
          'id',
          due.map((d) => d.id),
        )
        .update({ attempts: trx.raw('attempts + 1'), next_attempt_at: leaseUntil, updated_at: now })
        .returning('*')) as Row[];
      return rows.map(fromRow);
    });
  }

  /**
   * The answer of the attempt a sender claimed (`attempts` as claimed): a row claimed again
   * since (its lease ran out) is not overwritten by the older attempt. False when it was.
   */
  async recordAttempt(
    conn: Conn,
    claimed: InvoiceEmail,
    result: { status: EmailStatus; response: string; nextAttemptAt: Date | null; at: Date },
  ): Promise<boolean> {
    const n = await conn('invoice_emails')
      .where({ id: claimed.id, attempts: claimed.attempts, status: 'pending' })
      .update({
        status: result.status,
        last_response: oneLine(result.response),
        next_attempt_at: result.nextAttemptAt,
        updated_at: result.at,
        sent_at: result.status === 'sent' ? result.at : null,
      });
    return n > 0;
  }
}
