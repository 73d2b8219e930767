import type { Migration } from '@billstream/db';

/**
 * Reservations (docs/api/reservations.md, ADR 0068): credits of a PRE_PAID wallet held before
 * the work starts. One row per reservation; its idempotency key is unique in a tenant and
 * environment. `held` rows count against the wallet's available credits until `expires_at`
 * (a read never counts a hold past it), the job marks them `expired`. Expand-only: a new table.
 */
export function reservationsMigration(schema: string): Migration {
  return {
    name: '006_reservations',
    async up(db) {
      await db.raw(
        `CREATE TABLE ??.reservations (
          id text PRIMARY KEY,
          tenant_id text NOT NULL,
          environment_id text NOT NULL,
          customer_id text NOT NULL,
          wallet_id text NOT NULL REFERENCES ??.wallets (id),
          currency text NOT NULL,
          status text NOT NULL CHECK (status IN ('held', 'committed', 'released', 'expired')),
          credits_held numeric NOT NULL CHECK (credits_held > 0),
          credits_committed numeric,
          transaction_id text REFERENCES ??.transactions (id),
          allow_overage boolean NOT NULL,
          expires_at timestamptz NOT NULL,
          idempotency_key text NOT NULL,
          request_hash text NOT NULL,
          metadata jsonb NOT NULL DEFAULT '{}',
          created_at timestamptz NOT NULL,
          updated_at timestamptz NOT NULL,
          ended_at timestamptz,
          UNIQUE (tenant_id, environment_id, idempotency_key)
        )`,
        [schema, schema, schema],
      );
      await db.raw(`CREATE INDEX reservations_live ON ??.reservations (wallet_id) INCLUDE (credits_held, expires_at) WHERE status = 'held'`, [schema]);
      await db.raw(`CREATE INDEX reservations_due ON ??.reservations (expires_at) WHERE status = 'held'`, [schema]);
      await db.raw('CREATE INDEX reservations_of_customer ON ??.reservations (tenant_id, environment_id, customer_id, id)', [schema]);
    },
    async down(db) {
      await db.raw('DROP TABLE ??.reservations', [schema]);
    },
  };
}
