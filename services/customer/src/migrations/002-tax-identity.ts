import type { Migration } from '@billstream/db';

/** A customer's tax identity (docs/api/customers.md#tax-identity, ADR 0066): its tax ids and exemption. */
export function taxIdentityMigration(schema: string): Migration {
  return {
    name: '002_tax_identity',
    async up(db) {
      await db.raw(`ALTER TABLE ??.customers ADD COLUMN tax_ids jsonb NOT NULL DEFAULT '[]', ADD COLUMN tax_exempt text NOT NULL DEFAULT 'none'`, [schema]);
    },
    async down(db) {
      await db.raw('ALTER TABLE ??.customers DROP COLUMN tax_ids, DROP COLUMN tax_exempt', [schema]);
    },
  };
}
