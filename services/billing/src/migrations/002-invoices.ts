import type { Migration } from '@billstream/db';

/**
 * Invoices, their lines, the per tenant+environment invoice number counter, and payments
 * (ADR 0016). Exactly one invoice per subscription, period start and billing reason is a
 * unique key; an invoice made from another service's fact (an invoiced top-up) is unique on
 * its `source_key`. Money columns are BIGINT minor units.
 */
export function invoicesMigration(schema: string): Migration {
  return {
    name: '002_invoices',
    async up(db) {
      await db.raw(
        `CREATE TABLE ??.invoices (
          id text PRIMARY KEY,
          tenant_id text NOT NULL,
          environment_id text NOT NULL,
          customer_id text NOT NULL,
          subscription_id text REFERENCES ??.subscriptions (id),
          billing_reason text NOT NULL CHECK (billing_reason IN
            ('SUBSCRIPTION_CREATE', 'SUBSCRIPTION_CYCLE', 'SUBSCRIPTION_PAUSE', 'SUBSCRIPTION_RESUME', 'SUBSCRIPTION_CANCEL', 'CREDIT_PURCHASE')),
          source_key text,
          status text NOT NULL CHECK (status IN ('draft', 'finalized', 'paid', 'voided')),
          payment_status text NOT NULL CHECK (payment_status IN ('pending', 'partially_paid', 'succeeded')),
          currency text NOT NULL,
          period_start timestamptz,
          period_end timestamptz,
          payment_terms_days integer NOT NULL,
          due_date timestamptz,
          overdue boolean NOT NULL DEFAULT false,
          subtotal bigint NOT NULL,
          total_prepaid_credits_applied bigint NOT NULL DEFAULT 0,
          total bigint NOT NULL,
          amount_due bigint NOT NULL,
          amount_paid bigint NOT NULL DEFAULT 0,
          amount_remaining bigint NOT NULL,
          invoice_number text,
          finalize_after timestamptz NOT NULL,
          frozen_at timestamptz,
          finalized_at timestamptz,
          voided_at timestamptz,
          refund_state text CHECK (refund_state IN ('pending', 'done')),
          work_lease_until timestamptz,
          source jsonb,
          version integer NOT NULL DEFAULT 1,
          created_at timestamptz NOT NULL,
          updated_at timestamptz NOT NULL,
          CHECK (subtotal >= 0 AND total_prepaid_credits_applied >= 0 AND total = subtotal - total_prepaid_credits_applied),
          CHECK (amount_due = total AND amount_paid >= 0 AND amount_remaining = amount_due - amount_paid AND amount_remaining >= 0)
        )`,
        [schema, schema],
      );
      await db.raw(
        `CREATE UNIQUE INDEX invoices_one_per_period ON ??.invoices (subscription_id, period_start, billing_reason) WHERE subscription_id IS NOT NULL`,
        [schema],
      );
      await db.raw(`CREATE UNIQUE INDEX invoices_source ON ??.invoices (tenant_id, environment_id, source_key) WHERE source_key IS NOT NULL`, [schema]);
      await db.raw(`CREATE UNIQUE INDEX invoices_number ON ??.invoices (tenant_id, environment_id, invoice_number) WHERE invoice_number IS NOT NULL`, [schema]);
      await db.raw(`CREATE INDEX invoices_created ON ??.invoices (tenant_id, environment_id, created_at DESC, id DESC)`, [schema]);
      await db.raw(`CREATE INDEX invoices_customer ON ??.invoices (tenant_id, environment_id, customer_id, created_at DESC, id DESC)`, [schema]);
      await db.raw(`CREATE INDEX invoices_subscription ON ??.invoices (subscription_id, created_at DESC, id DESC)`, [schema]);
      await db.raw(`CREATE INDEX invoices_status ON ??.invoices (tenant_id, environment_id, status, created_at DESC, id DESC)`, [schema]);
      await db.raw(`CREATE INDEX invoices_drafts_due ON ??.invoices (finalize_after, id) WHERE status = 'draft'`, [schema]);
      await db.raw(`CREATE INDEX invoices_overdue_due ON ??.invoices (due_date, id) WHERE status = 'finalized' AND NOT overdue`, [schema]);
      await db.raw(`CREATE INDEX invoices_refunds_pending ON ??.invoices (id) WHERE refund_state = 'pending'`, [schema]);
      await db.raw(
        `CREATE TABLE ??.invoice_line_items (
          id text PRIMARY KEY,
          invoice_id text NOT NULL REFERENCES ??.invoices (id),
          position integer NOT NULL,
          price_id text,
          price_type text NOT NULL CHECK (price_type IN ('FIXED', 'USAGE')),
          meter_id text,
          description text NOT NULL,
          quantity text NOT NULL,
          unit_amount text NOT NULL,
          amount bigint NOT NULL CHECK (amount >= 0),
          prepaid_credits_applied bigint NOT NULL DEFAULT 0 CHECK (prepaid_credits_applied >= 0 AND prepaid_credits_applied <= amount),
          period_start timestamptz,
          period_end timestamptz,
          UNIQUE (invoice_id, position)
        )`,
        [schema, schema],
      );
      await db.raw(
        `CREATE TABLE ??.invoice_counters (
          tenant_id text NOT NULL,
          environment_id text NOT NULL,
          last_number bigint NOT NULL,
          PRIMARY KEY (tenant_id, environment_id)
        )`,
        [schema],
      );
      await db.raw(
        `CREATE TABLE ??.payments (
          id text PRIMARY KEY,
          tenant_id text NOT NULL,
          environment_id text NOT NULL,
          invoice_id text NOT NULL REFERENCES ??.invoices (id),
          amount bigint NOT NULL CHECK (amount > 0),
          currency text NOT NULL,
          payment_method_type text NOT NULL CHECK (payment_method_type IN ('OFFLINE', 'CREDITS')),
          wallet_id text,
          wallet_transaction_id text,
          reference text,
          idempotency_key text,
          request_hash text,
          payment_status text NOT NULL CHECK (payment_status IN ('pending', 'succeeded', 'failed')),
          created_at timestamptz NOT NULL,
          updated_at timestamptz NOT NULL
        )`,
        [schema, schema],
      );
      await db.raw(
        `CREATE UNIQUE INDEX payments_idempotency ON ??.payments (tenant_id, environment_id, idempotency_key) WHERE idempotency_key IS NOT NULL`,
        [schema],
      );
      await db.raw(`CREATE INDEX payments_invoice ON ??.payments (invoice_id, created_at, id)`, [schema]);
      await db.raw(`CREATE INDEX payments_created ON ??.payments (tenant_id, environment_id, created_at, id)`, [schema]);
      await db.raw(`CREATE INDEX payments_pending ON ??.payments (id) WHERE payment_status = 'pending'`, [schema]);
      await db.raw(`ALTER TABLE ??.subscriptions ADD COLUMN work_lease_until timestamptz`, [schema]);
    },
    async down(db) {
      await db.raw(`ALTER TABLE ??.subscriptions DROP COLUMN work_lease_until`, [schema]);
      for (const table of ['payments', 'invoice_counters', 'invoice_line_items', 'invoices']) await db.raw('DROP TABLE ??.??', [schema, table]);
    },
  };
}
