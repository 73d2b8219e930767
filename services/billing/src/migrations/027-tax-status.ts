import type { Migration } from '@billstream/db';

/**
 * The HTTP tax provider (docs/api/taxes.md#http-provider, ADR 0071): whether a draft bears its
 * tax yet (`tax_status`: ok, pending until the provider answered, failed after a failed call)
 * and how many calls in a row failed (`tax_attempts`, the exponent of the retry's backoff; the
 * retry itself waits on the period job's claim, `work_lease_until`).
 */
export function taxStatusMigration(schema: string): Migration {
  return {
    name: '027_tax_status',
    async up(db) {
      await db.raw(
        `ALTER TABLE ??.invoices ADD COLUMN tax_status text NOT NULL DEFAULT 'ok' CHECK (tax_status IN ('ok', 'pending', 'failed')),
           ADD COLUMN tax_attempts integer NOT NULL DEFAULT 0 CHECK (tax_attempts >= 0),
           ADD CONSTRAINT invoices_taxed_when_final CHECK (status IN ('draft', 'voided') OR tax_status = 'ok')`,
        [schema],
      );
    },
    async down(db) {
      await db.raw('ALTER TABLE ??.invoices DROP CONSTRAINT invoices_taxed_when_final, DROP COLUMN tax_status, DROP COLUMN tax_attempts', [schema]);
    },
  };
}
