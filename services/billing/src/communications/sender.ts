import type { Scope } from '@billstream/contracts';
import type { Db } from '@billstream/db';
import type { Logger } from '@billstream/logger';
import { recordInvoiceEmailAttempt } from '@billstream/observability';
import { Repeating, failpoint } from '@billstream/runtime';
import nodemailer, { type Transporter } from 'nodemailer';
import type { DocumentStore } from '../documents/store';
import type { InvoiceStore } from '../invoices/store';
import { emailContent } from './message';
import type { EmailStore, InvoiceEmail } from './store';

/** A claimed email is kept off other senders this long: longer than the SMTP timeouts of one attempt. */
export const EMAIL_LEASE_MS = 5 * 60_000;
/** The longest wait between two attempts. */
export const MAX_RETRY_DELAY_MS = 6 * 3_600_000;
const BATCH = 20;

export interface EmailSenderDeps {
  db: Db;
  emails: EmailStore;
  invoices: InvoiceStore;
  documents: DocumentStore;
  /** The invoice's frozen PDF: the bytes `GET /v1/invoices/{id}/pdf` serves. */
  pdf: (scope: Scope, invoiceId: string) => Promise<Buffer>;
  /** SMTP_URL; undefined: no sender runs and emails wait `pending`. */
  smtpUrl: string | undefined;
  logger: Logger;
  clock: () => Date;
  pollMs: number;
  maxAttempts: number;
  retryBaseMs: number;
  /** The portal link of a message built now for the invoice's customer (ADR 0067); null: none. */
  portalLink?: (email: InvoiceEmail, customerId: string, now: Date) => string | null;
}

/** The delay before attempt n + 1 after attempt n failed: the base, doubled each time, at most 6 hours. */
export function retryDelayMs(attempts: number, baseMs: number): number {
  return Math.min(baseMs * 2 ** Math.max(0, attempts - 1), MAX_RETRY_DELAY_MS);
}

/** What a failed attempt's error says: the server's answer, or why there was none. */
function failureOf(err: unknown): { result: 'refused' | 'unavailable'; response: string } {
  const e = err as { responseCode?: number; response?: string; code?: string; message?: string };
  if (typeof e.responseCode === 'number') return { result: 'refused', response: e.response ?? `${e.responseCode} ${e.message ?? ''}` };
  return { result: 'unavailable', response: `${e.code ?? 'ERROR'}: ${e.message ?? String(err)}` };
}

/**
 * The invoice email sender (ADR 0067): claims due emails in a short transaction, sends each to
 * SMTP_URL outside any transaction, records the answer in another: `sent`; else `pending` again
 * after a backoff while the server refuses or is down; `failed` after `maxAttempts`. Every
 * replica may run one: a claimed row is skipped by the others. At least once at the SMTP edge: a
 * sender that dies between the server's 250 and the record sends again after the lease, with
 * the same Message-ID.
 */
export class EmailSender {
  private readonly transport: Transporter | undefined;
  private readonly schedule: Repeating<void>;
  /** Between start() and stop(): a round in flight stops taking batches once this is false. */
  private active = false;

  constructor(private readonly deps: EmailSenderDeps) {
    this.transport = deps.smtpUrl
      ? nodemailer.createTransport({ url: deps.smtpUrl, connectionTimeout: 30_000, greetingTimeout: 30_000, socketTimeout: 60_000 } as Parameters<typeof nodemailer.createTransport>[0])
      : undefined;
    this.schedule = new Repeating({
      // Rounds back to back while they find a full batch, then every pollMs.
      run: async () => {
        while (this.active && (await this.runOnce()) === BATCH);
      },
      intervalMs: deps.pollMs,
      immediate: true,
      unref: true,
      logger: deps.logger,
      failure: 'invoice email round failed; will retry',
    });
  }

  start(): void {
    if (!this.transport || this.deps.pollMs <= 0) return;
    this.active = true;
    this.schedule.start();
  }

  /** Looks now (an email was just recorded). */
  poke(): void {
    this.schedule.poke();
  }

  async stop(): Promise<void> {
    this.active = false;
    await this.schedule.stop();
    this.transport?.close();
  }

  /** One round: the due emails claimed and attempted; answers how many were claimed. */
  async runOnce(): Promise<number> {
    if (!this.transport) return 0;
    const now = this.deps.clock();
    const claimed = await this.deps.emails.claim(this.deps.db, now, new Date(now.getTime() + EMAIL_LEASE_MS), BATCH);
    for (const email of claimed) await this.attempt(email);
    return claimed.length;
  }

  private async attempt(email: InvoiceEmail): Promise<void> {
    let outcome: { status: 'sent' | 'pending' | 'failed'; response: string; nextAttemptAt: Date | null };
    try {
      const response = await this.send(email);
      // The server has the message; a crash here sends it again after the lease, same Message-ID (ADR 0067).
      failpoint('email.after-accepted');
      recordInvoiceEmailAttempt('sent');
      outcome = { status: 'sent', response, nextAttemptAt: null };
    } catch (err) {
      const { result, response } = failureOf(err);
      recordInvoiceEmailAttempt(result);
      const last = email.attempts >= this.deps.maxAttempts;
      outcome = { status: last ? 'failed' : 'pending', response, nextAttemptAt: last ? null : new Date(this.deps.clock().getTime() + retryDelayMs(email.attempts, this.deps.retryBaseMs)) };
      this.deps.logger.warn('invoice email attempt failed', { invoice_id: email.invoiceId, communication_id: email.id, attempts: email.attempts, result, response, final: last });
    }
    await this.deps.emails.recordAttempt(this.deps.db, email, { ...outcome, at: this.deps.clock() });
  }

  /** Builds the message from the invoice as it is and its frozen PDF, sends it, answers the server's answer. */
  private async send(email: InvoiceEmail): Promise<string> {
    const scope = { tenantId: email.tenantId, environmentId: email.environmentId };
    const invoice = (await this.deps.invoices.getById(this.deps.db, email.invoiceId))!;
    const [snapshot, pdf] = [await this.deps.documents.getById(this.deps.db, email.invoiceId), await this.deps.pdf(scope, email.invoiceId)];
    const content = emailContent(email, invoice, snapshot, this.deps.portalLink?.(email, invoice.customerId, this.deps.clock()) ?? null);
    const info = (await this.transport!.sendMail({
      messageId: email.messageId,
      from: email.sender,
      to: email.recipient!,
      ...(email.bcc ? { bcc: email.bcc } : {}),
      ...(email.replyTo ? { replyTo: email.replyTo } : {}),
      subject: content.subject,
      text: content.text,
      html: content.html,
      attachments: [{ filename: content.filename, content: pdf, contentType: 'application/pdf' }],
      headers: { 'X-Billstream-Invoice': email.invoiceId },
    })) as { response?: string; rejected?: unknown[]; rejectedErrors?: Error[] };
    // The server may refuse the customer and take the bcc: the email is not delivered, the error is its answer.
    if (info.rejected?.some((r) => (typeof r === 'string' ? r : (r as { address?: string }).address) === email.recipient)) {
      throw info.rejectedErrors?.[0] ?? Object.assign(new Error(`the server refused ${email.recipient}`), { responseCode: 550, response: `550 refused ${email.recipient}` });
    }
    return info.response ?? '250 OK';
  }
}
