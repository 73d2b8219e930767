import type { Migration } from '@billstream/db';

/**
 * Splits what the wallet row holds pending: `pending_credits` held pending credits minus
 * pending debits in one number; no debit has ever been pending, so it holds exactly the
 * pending credits and keeps them, and `pending_debits` starts at 0.
 */
export function pendingDebitsMigration(schema: string): Migration {
  return {
    name: '002_pending_debits',
    async up(db) {
      await db.raw('ALTER TABLE ??.wallets ADD COLUMN pending_debits numeric NOT NULL DEFAULT 0', [schema]);
    },
    async down(db) {
      await db.raw('ALTER TABLE ??.wallets DROP COLUMN pending_debits', [schema]);
    },
  };
}
