import type { Migration } from '@billstream/db';

/** Wallets, their ledger entries (table transactions), and the projection of customers. */
export function walletsMigration(schema: string): Migration {
  return {
    name: '001_wallets',
    async up(db) {
      await db.raw(
        `CREATE TABLE ??.customers (
          id text PRIMARY KEY,
          tenant_id text NOT NULL,
          environment_id text NOT NULL,
          deleted_at timestamptz,
          updated_at timestamptz NOT NULL DEFAULT now()
        )`,
        [schema],
      );
      await db.raw(
        `CREATE TABLE ??.wallets (
          id text PRIMARY KEY,
          tenant_id text NOT NULL,
          environment_id text NOT NULL,
          customer_id text NOT NULL,
          currency text NOT NULL,
          wallet_type text NOT NULL,
          wallet_status text NOT NULL,
          credit_balance numeric NOT NULL DEFAULT 0,
          pending_credits numeric NOT NULL DEFAULT 0,
          conversion_rate numeric NOT NULL,
          topup_conversion_rate numeric NOT NULL,
          allowed_price_types jsonb NOT NULL,
          description text,
          metadata jsonb NOT NULL DEFAULT '{}',
          auto_topup jsonb,
          alert_settings jsonb,
          alert_state text NOT NULL DEFAULT 'ok',
          ongoing_alert_state text NOT NULL DEFAULT 'ok',
          ledger_seq bigint NOT NULL DEFAULT 0,
          version integer NOT NULL DEFAULT 1,
          created_at timestamptz NOT NULL,
          updated_at timestamptz NOT NULL,
          CONSTRAINT wallet_credit_balance_not_negative CHECK (credit_balance >= 0)
        )`,
        [schema],
      );
      await db.raw(
        `CREATE UNIQUE INDEX wallets_one_open_per_kind ON ??.wallets (tenant_id, environment_id, customer_id, currency, wallet_type)
         WHERE wallet_status <> 'closed'`,
        [schema],
      );
      await db.raw('CREATE INDEX wallets_by_customer ON ??.wallets (tenant_id, environment_id, customer_id, created_at, id)', [schema]);
      await db.raw(
        `CREATE TABLE ??.transactions (
          id text PRIMARY KEY,
          wallet_id text NOT NULL REFERENCES ??.wallets (id),
          tenant_id text NOT NULL,
          environment_id text NOT NULL,
          type text NOT NULL,
          transaction_status text NOT NULL,
          credit_amount numeric NOT NULL,
          amount numeric NOT NULL,
          credit_balance_before numeric NOT NULL,
          credit_balance_after numeric NOT NULL,
          credits_available numeric NOT NULL,
          expiry_date timestamptz,
          priority integer,
          transaction_reason text NOT NULL,
          description text,
          idempotency_key text,
          request_hash text,
          expired_credit_id text,
          ledger_seq bigint,
          created_at timestamptz NOT NULL,
          updated_at timestamptz NOT NULL,
          CONSTRAINT transaction_credits_available_range CHECK (credits_available >= 0 AND credits_available <= credit_amount)
        )`,
        [schema, schema],
      );
      await db.raw(
        'CREATE UNIQUE INDEX transactions_idempotency ON ??.transactions (wallet_id, idempotency_key) WHERE idempotency_key IS NOT NULL',
        [schema],
      );
      await db.raw(
        'CREATE UNIQUE INDEX transactions_one_expiry_per_credit ON ??.transactions (expired_credit_id) WHERE expired_credit_id IS NOT NULL',
        [schema],
      );
      await db.raw('CREATE INDEX transactions_by_wallet ON ??.transactions (wallet_id, created_at DESC, id DESC)', [schema]);
      await db.raw(
        `CREATE INDEX transactions_spendable ON ??.transactions
           (wallet_id, priority ASC NULLS LAST, expiry_date ASC NULLS LAST, created_at, id)
         WHERE type = 'CREDIT' AND transaction_status = 'COMPLETED' AND credits_available > 0`,
        [schema],
      );
      await db.raw(
        `CREATE INDEX transactions_expiring ON ??.transactions (expiry_date, wallet_id)
         WHERE type = 'CREDIT' AND transaction_status = 'COMPLETED' AND credits_available > 0 AND expiry_date IS NOT NULL`,
        [schema],
      );
    },
    async down(db) {
      await db.raw('DROP TABLE ??.transactions', [schema]);
      await db.raw('DROP TABLE ??.wallets', [schema]);
      await db.raw('DROP TABLE ??.customers', [schema]);
    },
  };
}
