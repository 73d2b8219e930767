import type { Migration } from '@billstream/db';

/**
 * What each invoice took from wallets (docs/adr/0016-invoices-exactly-once.md):
 * `invoice_allocations` holds one row per invoice once credits were allocated to it or it was
 * voided (the tombstone), so the allocation happens once; `invoice_debits` holds every debit
 * made for an invoice (credit application, POST_PAID payment, credits payment) and its refund.
 */
export function invoiceCreditsMigration(schema: string): Migration {
  return {
    name: '003_invoice_credits',
    async up(db) {
      await db.raw(
        `CREATE TABLE ??.invoice_allocations (
          tenant_id text NOT NULL,
          environment_id text NOT NULL,
          invoice_id text NOT NULL,
          status text NOT NULL,
          result jsonb,
          request_hash text,
          voided_at timestamptz,
          created_at timestamptz NOT NULL,
          updated_at timestamptz NOT NULL,
          PRIMARY KEY (tenant_id, environment_id, invoice_id),
          CONSTRAINT invoice_allocation_status CHECK (status IN ('allocated', 'voided')),
          CONSTRAINT invoice_allocation_voided_at CHECK ((status = 'voided') = (voided_at IS NOT NULL))
        )`,
        [schema],
      );
      await db.raw(
        `CREATE TABLE ??.invoice_debits (
          tenant_id text NOT NULL,
          environment_id text NOT NULL,
          key text NOT NULL,
          invoice_id text NOT NULL,
          wallet_id text NOT NULL REFERENCES ??.wallets (id),
          transaction_id text NOT NULL REFERENCES ??.transactions (id),
          credits numeric NOT NULL,
          amount bigint NOT NULL,
          request_hash text,
          refund_transaction_id text REFERENCES ??.transactions (id),
          refunded_at timestamptz,
          refund_skipped boolean NOT NULL DEFAULT false,
          created_at timestamptz NOT NULL,
          PRIMARY KEY (tenant_id, environment_id, key),
          CONSTRAINT invoice_debit_positive CHECK (credits > 0 AND amount > 0),
          CONSTRAINT invoice_debit_refund CHECK (
            (refunded_at IS NULL AND refund_transaction_id IS NULL AND NOT refund_skipped)
            OR (refunded_at IS NOT NULL AND (refund_transaction_id IS NULL) = refund_skipped)
          )
        )`,
        [schema, schema, schema, schema],
      );
      await db.raw('CREATE INDEX invoice_debits_by_invoice ON ??.invoice_debits (tenant_id, environment_id, invoice_id, created_at, transaction_id)', [schema]);
    },
    async down(db) {
      await db.raw('DROP TABLE ??.invoice_debits', [schema]);
      await db.raw('DROP TABLE ??.invoice_allocations', [schema]);
    },
  };
}
