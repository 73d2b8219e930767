import type { Migration } from '@billstream/db';

/**
 * Signed links that expire and can be revoked (ADR 0059):
 * - `invoice_document_links`: per invoice, the generation its links are signed with; revoking
 *   raises it, and every link of an older generation answers 410. No row: generation 0.
 * - `document_link_keys` is dropped: the links' key is no longer kept in the database next to the
 *   documents it protects (it is DOCUMENT_LINK_SECRET, a file of DATA_DIR under `npm start`, or
 *   derived from INTERNAL_TOKEN). A replica of the previous version read its key at start and
 *   keeps it in memory, so a rolling deploy does not break its finalizations.
 */
export function documentLinksMigration(schema: string): Migration {
  return {
    name: '022_document_links',
    async up(db) {
      await db.raw(
        `CREATE TABLE ??.invoice_document_links (
           invoice_id text PRIMARY KEY,
           tenant_id text NOT NULL,
           environment_id text NOT NULL,
           generation integer NOT NULL,
           revoked_at timestamptz NOT NULL
         )`,
        [schema],
      );
      await db.raw('DROP TABLE IF EXISTS ??.document_link_keys', [schema]);
    },
    async down(db) {
      await db.raw(`CREATE TABLE ??.document_link_keys (id smallint PRIMARY KEY CHECK (id = 1), secret text NOT NULL, created_at timestamptz NOT NULL)`, [schema]);
      await db.raw('DROP TABLE ??.invoice_document_links', [schema]);
    },
  };
}
