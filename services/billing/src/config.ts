import { z } from 'zod';
import { env, loadConfig } from '@billstream/config';

/** Variables of the billing service beyond the common ones. */
export const billingEnv = {
  CUSTOMER_SERVICE_URL: z.string().url('must be the base URL of the customer service'),
  INGESTION_SERVICE_URL: z.string().url('must be the base URL of the ingestion-aggregator'),
  /** How often the period job runs; 0 turns the schedule off. */
  BILLING_INTERVAL_MS: env.int(60_000, 0),
  /**
   * How long the period job's claim on a subscription or invoice keeps other replicas off it; a
   * crashed replica's claims wait this long before another run takes them again. Every step is
   * idempotent, so a shorter lease only risks repeated work, never double billing.
   */
  BILLING_CLAIM_LEASE_MS: env.int(60_000, 1000),
  SUBSCRIPTION_RENEWAL_NOTICE_DAYS: z.coerce.number().int('must be a whole number').min(0).max(366).default(3),
  /** Grace window before a draft is finalized by itself: `0s`, `90s`, `15m`, `2h`, `1d` (or milliseconds). */
  BILLING_FINALIZE_DELAY: z
    .string()
    .regex(/^\d{1,9}(ms|s|m|h|d)?$/, 'must be a duration like 0s, 90s, 15m, 2h or 1d')
    .default('0s'),
  /** The prefix of invoice numbers: {prefix}-{YYYYMM}-{n}. */
  INVOICE_NUMBER_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9]{1,16}$/, 'must be 1 to 16 letters or digits')
    .default('INV'),
  /** The prefix of credit note numbers: {prefix}-{YYYYMM}-{n} (docs/api/credit-notes.md). */
  CREDIT_NOTE_NUMBER_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9]{1,16}$/, 'must be 1 to 16 letters or digits')
    .default('CN'),
  /** Subscriptions or invoices the period job works on at once (each is HTTP calls plus a transaction). */
  BILLING_JOB_CONCURRENCY: env.int(8, 1),
  /** How often an idle task runner looks for export and import tasks; 0: this process runs none (ADR 0019). */
  TASKS_POLL_MS: env.int(1000, 0),
  /**
   * How long a runner's claim on a task lasts (renewed every third of it while the task runs):
   * a task whose process died is resumed from its checkpoint this long after.
   */
  TASKS_LEASE_MS: env.int(30_000, 1000),
  /** Rows per committed batch of event exports and imports (each batch is one checkpoint). */
  TASKS_BATCH_ROWS: env.int(2000, 10),
  /** Real-time balance (ADR 0024): how long a customer whose usage was stored waits for others before its unbilled usage is recomputed. */
  UNBILLED_DEBOUNCE_MS: env.int(250, 0),
  /** How often every customer with running usage subscriptions or drafts is recomputed (a lost notification heals); 0 turns it off. */
  UNBILLED_SWEEP_MS: env.int(30_000, 0),
  /** The gateway's public address: the base of the signed links `hosted_invoice_url` and `invoice_pdf_url` (ADR 0045). */
  PUBLIC_BASE_URL: z
    .string()
    .url('must be the public base URL of the gateway, like https://billing.example.com')
    .default('http://127.0.0.1:8080')
    .transform((u) => u.replace(/\/+$/, '')),
  /**
   * The key of the signed links (32+ characters); empty: a key derived from INTERNAL_TOKEN (a
   * billing process) or a random one kept in DATA_DIR (`npm start`), never in the database (ADR 0059).
   */
  DOCUMENT_LINK_SECRET: z
    .string()
    .refine((v) => v === '' || v.length >= 32, 'must be at least 32 characters (or empty: derived from INTERNAL_TOKEN, or kept in DATA_DIR by npm start)')
    .default(''),
  /** Days a signed link lasts after the invoice's due date (a link made later: after the time it is made; ADR 0059). */
  DOCUMENT_LINK_TTL_DAYS_AFTER_DUE: z.coerce.number().int('must be a whole number').min(1, 'must be at least 1').max(3650, 'must be at most 3650').default(30),
  /**
   * The SMTP server of invoice email (ADR 0067): `smtp://user:pass@host:587` (STARTTLS when the
   * server offers it) or `smtps://…:465`; empty: no email is sent.
   */
  SMTP_URL: z
    .string()
    .refine((v) => v === '' || /^smtps?:\/\/[^\s/]+(:\d+)?\/?(\?\S*)?$/.test(v), 'must be an smtp:// or smtps:// URL like smtp://user:pass@mail.example.com:587 (or empty: no email)')
    .default(''),
  /** How often an idle invoice email sender looks for email to send (ADR 0067); 0: this process sends none. */
  BILLING_EMAIL_POLL_MS: env.int(5000, 0),
  /** Attempts of one invoice email before it is `failed` (ADR 0067). */
  BILLING_EMAIL_MAX_ATTEMPTS: env.int(10, 1),
  /** The first retry's delay; each next one doubles it, at most 6 hours (ADR 0067). */
  BILLING_EMAIL_RETRY_BASE_MS: env.int(60_000, 10),
  /** How long billing waits for the HTTP tax provider's whole answer (docs/api/taxes.md#http-provider). */
  TAX_PROVIDER_TIMEOUT_MS: env.int(5000, 10),
  /** The HTTP tax provider's retry after a failure: this, doubled after each next failure in a row, at most TAX_PROVIDER_RETRY_MAX_MS. */
  TAX_PROVIDER_RETRY_BASE_MS: env.int(60_000, 10),
  TAX_PROVIDER_RETRY_MAX_MS: env.int(3_600_000, 10),
  /** Wallet service base URL (credits on invoices, CREDITS payments). */
  WALLET_SERVICE_URL: z.string().url('must be the base URL of the wallet service'),
};

/** Settings the embedded default reads from the environment (service addresses are known in-process). */
export const billingSettingsEnv = z.object(billingEnv).omit({ CUSTOMER_SERVICE_URL: true, INGESTION_SERVICE_URL: true, WALLET_SERVICE_URL: true });

export interface BillingSettings {
  intervalMs: number;
  /** How long the period job's claims last (BILLING_CLAIM_LEASE_MS). */
  leaseMs: number;
  renewalNoticeDays: number;
  /** Milliseconds a draft waits before the period job finalizes it. */
  finalizeDelayMs: number;
  invoiceNumberPrefix: string;
  creditNoteNumberPrefix: string;
  /** Subscriptions or invoices the period job works on at once. */
  concurrency: number;
  /** Task runner poll interval (TASKS_POLL_MS; 0: no runner in this process). */
  tasksPollMs: number;
  /** Task claim lease (TASKS_LEASE_MS). */
  tasksLeaseMs: number;
  /** Rows per batch of event exports and imports (TASKS_BATCH_ROWS). */
  tasksBatchRows: number;
  /** Debounce of unbilled usage recomputations (UNBILLED_DEBOUNCE_MS). */
  unbilledDebounceMs: number;
  /** Period of the unbilled usage sweep (UNBILLED_SWEEP_MS; 0: none). */
  unbilledSweepMs: number;
  /** The base of invoice documents' signed links (PUBLIC_BASE_URL, no trailing slash). */
  publicBaseUrl: string;
  /** The signed links' key (DOCUMENT_LINK_SECRET); undefined: derived from the internal token. */
  documentLinkSecret?: string;
  /** Days a signed link lasts after the due date (DOCUMENT_LINK_TTL_DAYS_AFTER_DUE). */
  documentLinkTtlDays: number;
  /** The SMTP server of invoice email (SMTP_URL); undefined: none, nothing is sent. */
  smtpUrl?: string;
  /** Invoice email sender's poll interval (BILLING_EMAIL_POLL_MS; 0: no sender in this process). */
  emailPollMs: number;
  /** Attempts before an invoice email is failed (BILLING_EMAIL_MAX_ATTEMPTS). */
  emailMaxAttempts: number;
  /** The first retry's delay of an invoice email (BILLING_EMAIL_RETRY_BASE_MS), doubled each time. */
  emailRetryBaseMs: number;
  /** The HTTP tax provider's timeout and retry backoff (TAX_PROVIDER_TIMEOUT_MS, TAX_PROVIDER_RETRY_BASE_MS, TAX_PROVIDER_RETRY_MAX_MS). */
  taxProvider: { timeoutMs: number; retryBaseMs: number; retryMaxMs: number };
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `90s` -> 90000; a bare number is milliseconds. */
export function durationMs(text: string): number {
  const m = /^(\d+)(ms|s|m|h|d)?$/.exec(text);
  if (!m) throw new RangeError(`not a duration: ${text}`);
  return Number(m[1]) * UNIT_MS[m[2] ?? 'ms'];
}

/** The one mapping of billing's variables to its settings, for its own process (main.ts) and the embedded default. */
export function billingSettings(config: z.output<typeof billingSettingsEnv>): BillingSettings {
  return {
    intervalMs: config.BILLING_INTERVAL_MS,
    leaseMs: config.BILLING_CLAIM_LEASE_MS,
    renewalNoticeDays: config.SUBSCRIPTION_RENEWAL_NOTICE_DAYS,
    finalizeDelayMs: durationMs(config.BILLING_FINALIZE_DELAY),
    invoiceNumberPrefix: config.INVOICE_NUMBER_PREFIX,
    creditNoteNumberPrefix: config.CREDIT_NOTE_NUMBER_PREFIX,
    concurrency: config.BILLING_JOB_CONCURRENCY,
    tasksPollMs: config.TASKS_POLL_MS,
    tasksLeaseMs: config.TASKS_LEASE_MS,
    tasksBatchRows: config.TASKS_BATCH_ROWS,
    unbilledDebounceMs: config.UNBILLED_DEBOUNCE_MS,
    unbilledSweepMs: config.UNBILLED_SWEEP_MS,
    publicBaseUrl: config.PUBLIC_BASE_URL,
    documentLinkSecret: config.DOCUMENT_LINK_SECRET || undefined,
    documentLinkTtlDays: config.DOCUMENT_LINK_TTL_DAYS_AFTER_DUE,
    smtpUrl: config.SMTP_URL || undefined,
    emailPollMs: config.BILLING_EMAIL_POLL_MS,
    emailMaxAttempts: config.BILLING_EMAIL_MAX_ATTEMPTS,
    emailRetryBaseMs: config.BILLING_EMAIL_RETRY_BASE_MS,
    taxProvider: { timeoutMs: config.TAX_PROVIDER_TIMEOUT_MS, retryBaseMs: config.TAX_PROVIDER_RETRY_BASE_MS, retryMaxMs: config.TAX_PROVIDER_RETRY_MAX_MS },
  };
}

/** Parses billing's settings of an environment (a bad value throws, naming the variable). */
export function billingSettingsFrom(source: NodeJS.ProcessEnv): BillingSettings {
  return billingSettings(loadConfig(billingSettingsEnv, source));
}
