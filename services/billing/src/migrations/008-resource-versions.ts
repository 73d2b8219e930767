import type { Migration } from '@billstream/db';

/**
 * Plans, features and entitlements get a version, as customers, wallets and webhook endpoints
 * have (docs/adr/0035-billing-api-contract.md): their ETag (`"<version>"`) guards a PUT
 * with If-Match. Existing rows start at 1, as a new row does. Expand-only.
 */
export function resourceVersionsMigration(schema: string): Migration {
  return {
    name: '008_resource_versions',
    async up(db) {
      for (const table of ['plans', 'features', 'entitlements']) {
        await db.raw('ALTER TABLE ??.?? ADD COLUMN version integer NOT NULL DEFAULT 1', [schema, table]);
      }
    },
    async down(db) {
      for (const table of ['plans', 'features', 'entitlements']) {
        await db.raw('ALTER TABLE ??.?? DROP COLUMN version', [schema, table]);
      }
    },
  };
}
