import type { Migration } from '@billstream/db';

/**
 * The credits other services ask for by idempotency key (`POST /internal/v1/credits`, ADR
 * 0039): one row per key and tenant+environment, written in the transaction of the credit, so
 * a repeat answers the stored credit even when the wallet it went to is closed since.
 * Expand-only: a new table.
 */
export function customerCreditsMigration(schema: string): Migration {
  return {
    name: '005_customer_credits',
    async up(db) {
      await db.raw(
        `CREATE TABLE ??.customer_credits (
          tenant_id text NOT NULL,
          environment_id text NOT NULL,
          idempotency_key text NOT NULL,
          customer_id text NOT NULL,
          wallet_id text NOT NULL REFERENCES ??.wallets (id),
          transaction_id text NOT NULL REFERENCES ??.transactions (id),
          wallet_created boolean NOT NULL,
          request_hash text NOT NULL,
          created_at timestamptz NOT NULL,
          PRIMARY KEY (tenant_id, environment_id, idempotency_key)
        )`,
        [schema, schema, schema],
      );
    },
    async down(db) {
      await db.raw('DROP TABLE ??.customer_credits', [schema]);
    },
  };
}
