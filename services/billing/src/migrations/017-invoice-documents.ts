import type { Migration } from '@billstream/db';

/**
 * Invoice documents and communication (docs/api/invoice-documents.md, ADR 0045).
 * - `customers`: the projection keeps the customer's name, email and address (from
 *   customer-events), the buyer an invoice document shows.
 * - `invoice_documents`: one row per finalized invoice, written in the finalizing transaction:
 *   the invoice, its payments, the seller (invoice settings) and the buyer as they were then; `pdf` is the
 *   document rendered from them at its first request, served as stored ever after.
 * - `invoice_communications`: the `invoice.communication.triggered` event written per
 *   idempotency key of an invoice.
 * - `document_link_keys`: the random key of the signed links when DOCUMENT_LINK_SECRET is unset
 *   (one row, made once, shared by every replica).
 * Expand-only: new nullable columns and new tables.
 */
export function invoiceDocumentsMigration(schema: string): Migration {
  return {
    name: '017_invoice_documents',
    async up(db) {
      await db.raw(`ALTER TABLE ??.customers ADD COLUMN name text, ADD COLUMN email text, ADD COLUMN address jsonb`, [schema]);
      await db.raw(
        `CREATE TABLE ??.invoice_documents (
          invoice_id text PRIMARY KEY REFERENCES ??.invoices (id),
          tenant_id text NOT NULL,
          environment_id text NOT NULL,
          invoice jsonb NOT NULL,
          seller jsonb,
          buyer jsonb NOT NULL,
          payments jsonb NOT NULL,
          pdf bytea,
          created_at timestamptz NOT NULL,
          rendered_at timestamptz
        )`,
        [schema, schema],
      );
      await db.raw(
        `CREATE TABLE ??.invoice_communications (
          invoice_id text NOT NULL REFERENCES ??.invoices (id),
          idempotency_key text NOT NULL,
          event_id text NOT NULL,
          created_at timestamptz NOT NULL,
          PRIMARY KEY (invoice_id, idempotency_key)
        )`,
        [schema, schema],
      );
      await db.raw(`CREATE TABLE ??.document_link_keys (id smallint PRIMARY KEY CHECK (id = 1), secret text NOT NULL, created_at timestamptz NOT NULL)`, [schema]);
    },
    async down(db) {
      await db.raw('DROP TABLE ??.document_link_keys', [schema]);
      await db.raw('DROP TABLE ??.invoice_communications', [schema]);
      await db.raw('DROP TABLE ??.invoice_documents', [schema]);
      await db.raw('ALTER TABLE ??.customers DROP COLUMN name, DROP COLUMN email, DROP COLUMN address', [schema]);
    },
  };
}
