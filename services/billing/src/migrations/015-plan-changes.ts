import type { Migration } from '@billstream/db';

/**
 * Plan changes (docs/api/plan-changes.md, ADR 0043).
 * - `subscriptions.last_change_at`: the instant of the last immediate change inside the current
 *   period (null once a new period starts): its ARREAR charges and usage count from there.
 *   `pending_change`: a change waiting for the period end, as asked and resolved.
 * - `subscription_changes`: one row per change (`schg_`), bound to its idempotency key, with
 *   the invoice it made; written in the transaction that swaps the plan.
 * - `invoice_line_items.billing_period_start`: the start of the billing period a line belongs to
 *   when its window is a part of it (a change's lines); discounts and commitments count periods
 *   by it (null: the line's `period_start`).
 * - `invoices.excess_credited_at`: when an invoice's `excess_credit` reached the PRE_PAID wallet
 *   (key `invoice-excess:{id}`); null while it is owed.
 * Expand-only: new nullable columns and a new table.
 */
export function planChangesMigration(schema: string): Migration {
  return {
    name: '015_plan_changes',
    async up(db) {
      await db.raw('ALTER TABLE ??.subscriptions ADD COLUMN last_change_at timestamptz, ADD COLUMN pending_change jsonb', [schema]);
      await db.raw('ALTER TABLE ??.invoice_line_items ADD COLUMN billing_period_start timestamptz', [schema]);
      await db.raw('ALTER TABLE ??.invoices ADD COLUMN excess_credited_at timestamptz', [schema]);
      await db.raw('CREATE INDEX invoices_excess_owed ON ??.invoices (finalized_at) WHERE excess_credit > 0 AND excess_credited_at IS NULL', [schema]);
      await db.raw(
        `CREATE TABLE ??.subscription_changes (
          id text PRIMARY KEY,
          tenant_id text NOT NULL,
          environment_id text NOT NULL,
          subscription_id text NOT NULL REFERENCES ??.subscriptions (id),
          idempotency_key text,
          request_hash text NOT NULL,
          effective text NOT NULL CHECK (effective IN ('immediately', 'period_end')),
          effective_at timestamptz NOT NULL,
          from_plan_id text NOT NULL,
          to_plan_id text NOT NULL,
          invoice_id text,
          subscription jsonb NOT NULL,
          created_at timestamptz NOT NULL
        )`,
        [schema, schema],
      );
      await db.raw(
        `CREATE UNIQUE INDEX subscription_changes_key ON ??.subscription_changes (tenant_id, environment_id, idempotency_key)
           WHERE idempotency_key IS NOT NULL`,
        [schema],
      );
      await db.raw('CREATE INDEX subscription_changes_of_subscription ON ??.subscription_changes (subscription_id, created_at)', [schema]);
    },
    async down(db) {
      await db.raw('DROP TABLE ??.subscription_changes', [schema]);
      await db.raw('DROP INDEX ??.invoices_excess_owed', [schema]);
      await db.raw('ALTER TABLE ??.invoices DROP COLUMN excess_credited_at', [schema]);
      await db.raw('ALTER TABLE ??.invoice_line_items DROP COLUMN billing_period_start', [schema]);
      await db.raw('ALTER TABLE ??.subscriptions DROP COLUMN pending_change, DROP COLUMN last_change_at', [schema]);
    },
  };
}
