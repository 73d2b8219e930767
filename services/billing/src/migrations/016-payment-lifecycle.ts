import type { Migration } from '@billstream/db';

/**
 * Payment lifecycle and billing settings (docs/api/billing.md#billing-settings-and-dunning, ADR 0044).
 * - `payments`: PROVIDER payments (a processor's, settled by `succeed`/`fail` calls) with
 *   `provider`, `provider_reference`, `failure_reason`, and `attempt` (the dunning attempt that
 *   made it); a failed payment stays, `failed`.
 * - `billing_settings`: one row per tenant and environment, the settings of
 *   `PUT /v1/settings/billing` (dunning, invoice settings), versioned.
 * Expand-only: new nullable columns, a widened check, a new table.
 */
export function paymentLifecycleMigration(schema: string): Migration {
  return {
    name: '016_payment_lifecycle',
    async up(db) {
      await db.raw(
        `ALTER TABLE ??.payments
           DROP CONSTRAINT payments_payment_method_type_check,
           ADD CONSTRAINT payments_payment_method_type_check CHECK (payment_method_type IN ('OFFLINE', 'CREDITS', 'PROVIDER')),
           ADD COLUMN provider text,
           ADD COLUMN provider_reference text,
           ADD COLUMN failure_reason text,
           ADD COLUMN attempt integer,
           ADD CONSTRAINT payments_provider CHECK ((payment_method_type = 'PROVIDER') = (provider IS NOT NULL))`,
        [schema],
      );
      await db.raw(
        `CREATE TABLE ??.billing_settings (
          tenant_id text NOT NULL,
          environment_id text NOT NULL,
          settings jsonb NOT NULL,
          version integer NOT NULL,
          updated_at timestamptz NOT NULL,
          PRIMARY KEY (tenant_id, environment_id)
        )`,
        [schema],
      );
    },
    async down(db) {
      await db.raw('DROP TABLE ??.billing_settings', [schema]);
      await db.raw(
        `ALTER TABLE ??.payments
           DROP CONSTRAINT payments_provider,
           DROP COLUMN attempt, DROP COLUMN failure_reason, DROP COLUMN provider_reference, DROP COLUMN provider,
           DROP CONSTRAINT payments_payment_method_type_check,
           ADD CONSTRAINT payments_payment_method_type_check CHECK (payment_method_type IN ('OFFLINE', 'CREDITS'))`,
        [schema],
      );
    },
  };
}
