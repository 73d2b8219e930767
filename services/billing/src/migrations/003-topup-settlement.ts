import type { Migration } from '@billstream/db';

/**
 * Invoiced top-ups (docs/api/billing.md#invoiced-top-ups): `settle_state` records, in the
 * transaction that pays a CREDIT_PURCHASE invoice in full, that its pending wallet credit must
 * be settled COMPLETED (`pending`), and that the wallet did it (`done`). The settle call runs
 * after that commit; the period job retries the pending ones, so a crash in between neither
 * loses nor repeats the settlement. Expand-only: existing rows keep `null`.
 */
export function topupSettlementMigration(schema: string): Migration {
  return {
    name: '003_topup_settlement',
    async up(db) {
      await db.raw(`ALTER TABLE ??.invoices ADD COLUMN settle_state text CHECK (settle_state IN ('pending', 'done'))`, [schema]);
      await db.raw(`CREATE INDEX invoices_settles_pending ON ??.invoices (id) WHERE settle_state = 'pending'`, [schema]);
    },
    async down(db) {
      await db.raw(`DROP INDEX ??.invoices_settles_pending`, [schema]);
      await db.raw(`ALTER TABLE ??.invoices DROP COLUMN settle_state`, [schema]);
    },
  };
}
