import type { Migration } from '@billstream/db';

/**
 * Progressive (threshold) billing (docs/api/thresholds.md, ADR 0046): a subscription's
 * `usage_thresholds` (minor units, ascending; `[]` without), and an index for the period job's
 * look at the active subscriptions that have some. Threshold invoices are invoices
 * (`SUBSCRIPTION_THRESHOLD`, a reason since migration 010), unique by (subscription, period
 * start, reason, sequence = the threshold's index). Expand-only.
 */
export function usageThresholdsMigration(schema: string): Migration {
  return {
    name: '018_usage_thresholds',
    async up(db) {
      await db.raw(`ALTER TABLE ??.subscriptions ADD COLUMN usage_thresholds jsonb NOT NULL DEFAULT '[]'`, [schema]);
      await db.raw(`CREATE INDEX subscriptions_with_thresholds ON ??.subscriptions (id) WHERE usage_thresholds <> '[]'::jsonb AND status = 'active'`, [schema]);
    },
    async down(db) {
      await db.raw('DROP INDEX ??.subscriptions_with_thresholds', [schema]);
      await db.raw('ALTER TABLE ??.subscriptions DROP COLUMN usage_thresholds', [schema]);
    },
  };
}
