import type { Migration } from '@billstream/db';

/**
 * Credit notes (docs/api/credit-notes.md, ADR 0041): `credit_notes` (one row per note, its three
 * amounts and the state of its wallet credit), `credit_note_lines` (what each invoice line gives
 * back), `credit_note_counters` (the gap-free `CN-` numbers, one counter per tenant and
 * environment, never reset). The identities are checked here as on invoices: the lines add up
 * to the note, and the note's three parts add up to it. Expand-only: new tables.
 */
export function creditNotesMigration(schema: string): Migration {
  return {
    name: '013_credit_notes',
    async up(db) {
      await db.raw(
        `CREATE TABLE ??.credit_notes (
          id text PRIMARY KEY,
          tenant_id text NOT NULL,
          environment_id text NOT NULL,
          credit_note_number text NOT NULL,
          invoice_id text NOT NULL REFERENCES ??.invoices (id),
          customer_id text NOT NULL,
          currency text NOT NULL,
          reason text NOT NULL,
          memo text,
          amount bigint NOT NULL,
          refund text NOT NULL,
          status text NOT NULL,
          origin text NOT NULL,
          pre_payment_amount bigint NOT NULL,
          wallet_amount bigint NOT NULL,
          refund_amount bigint NOT NULL,
          refund_status text NOT NULL,
          wallet_transaction_id text,
          idempotency_key text,
          request_hash text,
          metadata jsonb NOT NULL DEFAULT '{}',
          voided_at timestamptz,
          created_at timestamptz NOT NULL,
          updated_at timestamptz NOT NULL,
          CONSTRAINT credit_notes_number UNIQUE (tenant_id, environment_id, credit_note_number),
          CONSTRAINT credit_notes_idempotency UNIQUE (tenant_id, environment_id, idempotency_key),
          CONSTRAINT credit_notes_amounts CHECK (
            amount > 0 AND pre_payment_amount >= 0 AND wallet_amount >= 0 AND refund_amount >= 0
            AND amount = pre_payment_amount + wallet_amount + refund_amount),
          CONSTRAINT credit_notes_refund CHECK (refund IN ('WALLET', 'OFFLINE', 'NONE') AND (refund <> 'NONE' OR refund_amount = 0)),
          CONSTRAINT credit_notes_status CHECK (status IN ('issued', 'void') AND (status = 'void') = (voided_at IS NOT NULL)),
          CONSTRAINT credit_notes_origin CHECK (origin IN ('MANUAL', 'INVOICE_VOID')),
          CONSTRAINT credit_notes_refund_status CHECK (refund_status IN ('none', 'pending', 'succeeded')
            AND (origin = 'INVOICE_VOID' OR (refund_status = 'succeeded') = (wallet_transaction_id IS NOT NULL))
            AND (origin = 'MANUAL' OR wallet_transaction_id IS NULL))
        )`,
        [schema, schema],
      );
      await db.raw('CREATE INDEX credit_notes_created ON ??.credit_notes (tenant_id, environment_id, created_at, id)', [schema]);
      await db.raw('CREATE INDEX credit_notes_of_invoice ON ??.credit_notes (invoice_id)', [schema]);
      // One INVOICE_VOID note per invoice: an invoice is voided once.
      await db.raw("CREATE UNIQUE INDEX credit_notes_one_void_note ON ??.credit_notes (invoice_id) WHERE origin = 'INVOICE_VOID'", [schema]);
      await db.raw("CREATE INDEX credit_notes_refund_pending ON ??.credit_notes (updated_at) WHERE refund_status = 'pending'", [schema]);
      await db.raw(
        `CREATE TABLE ??.credit_note_lines (
          id text PRIMARY KEY,
          credit_note_id text NOT NULL REFERENCES ??.credit_notes (id),
          invoice_line_item_id text NOT NULL REFERENCES ??.invoice_line_items (id),
          position integer NOT NULL,
          amount bigint NOT NULL CHECK (amount > 0),
          UNIQUE (credit_note_id, invoice_line_item_id)
        )`,
        [schema, schema, schema],
      );
      await db.raw(
        `CREATE TABLE ??.credit_note_counters (
          tenant_id text NOT NULL,
          environment_id text NOT NULL,
          last_number bigint NOT NULL,
          PRIMARY KEY (tenant_id, environment_id)
        )`,
        [schema],
      );
    },
    async down(db) {
      await db.raw('DROP TABLE ??.credit_note_counters', [schema]);
      await db.raw('DROP TABLE ??.credit_note_lines', [schema]);
      await db.raw('DROP TABLE ??.credit_notes', [schema]);
    },
  };
}
