import type { Migration } from '@billstream/db';

/**
 * Invoice email (ADR 0067): `invoice_emails`, one row per (invoice, trigger), written in the
 * transaction of the finalization (`trigger_id` 'finalization') or of a `communications/trigger`
 * (`trigger_id` the event's id), so a trigger records its email once whatever repeats it. The
 * sender job claims `pending` rows whose `next_attempt_at` has come (FOR UPDATE SKIP LOCKED),
 * sends outside any transaction and records the answer: `sent`, `pending` again with a later
 * `next_attempt_at` (backoff), or `failed` after the last attempt. The addresses are the ones
 * of the trigger's moment. `message_id` is derived from `id`, so a resend after a crash carries
 * the same Message-ID. Expand-only: a new table.
 */
export function invoiceEmailsMigration(schema: string): Migration {
  return {
    name: '024_invoice_emails',
    async up(db) {
      await db.raw(
        `CREATE TABLE ??.invoice_emails (
          id text PRIMARY KEY,
          tenant_id text NOT NULL,
          environment_id text NOT NULL,
          invoice_id text NOT NULL REFERENCES ??.invoices (id),
          trigger text NOT NULL CHECK (trigger IN ('finalization', 'communication')),
          trigger_id text NOT NULL,
          status text NOT NULL CHECK (status IN ('pending', 'sent', 'failed')),
          recipient text,
          sender text NOT NULL,
          reply_to text,
          bcc text,
          hosted_invoice_url text,
          attempts integer NOT NULL DEFAULT 0,
          last_response text,
          next_attempt_at timestamptz,
          message_id text NOT NULL,
          created_at timestamptz NOT NULL,
          updated_at timestamptz NOT NULL,
          sent_at timestamptz,
          UNIQUE (invoice_id, trigger_id)
        )`,
        [schema, schema],
      );
      await db.raw(`CREATE INDEX invoice_emails_due ON ??.invoice_emails (next_attempt_at) WHERE status = 'pending'`, [schema]);
    },
    async down(db) {
      await db.raw('DROP TABLE ??.invoice_emails', [schema]);
    },
  };
}
