import type { Migration } from '@billstream/db';

/**
 * Holds of METERED hard-limit entitlements (docs/api/reservations.md, ADR 0070) in the same
 * table as holds of credits: one resource, one expiry job. A quantity hold has no wallet,
 * currency or credits; it names its feature, what the entitlement check said of it
 * (`entitlement`), and `quantity_held`. Expand-only: nullable columns and a looser check;
 * every existing row is a hold of credits and keeps satisfying it.
 */
export function quantityReservationsMigration(schema: string): Migration {
  return {
    name: '007_quantity_reservations',
    async up(db) {
      await db.raw(
        `ALTER TABLE ??.reservations
          ALTER COLUMN wallet_id DROP NOT NULL,
          ALTER COLUMN currency DROP NOT NULL,
          ALTER COLUMN credits_held DROP NOT NULL,
          DROP CONSTRAINT IF EXISTS reservations_credits_held_check,
          ADD COLUMN feature_id text,
          ADD COLUMN entitlement jsonb,
          ADD COLUMN quantity_held numeric,
          ADD COLUMN quantity_committed numeric,
          ADD COLUMN commit_event jsonb,
          ADD COLUMN event_seen_at timestamptz,
          ADD COLUMN settled_at timestamptz,
          ADD CONSTRAINT reservations_kind_check CHECK (
            (wallet_id IS NOT NULL AND currency IS NOT NULL AND credits_held > 0 AND feature_id IS NULL AND quantity_held IS NULL)
            OR (wallet_id IS NULL AND credits_held IS NULL AND feature_id IS NOT NULL AND entitlement IS NOT NULL AND quantity_held > 0))`,
        [schema],
      );
      await db.raw(
        `CREATE INDEX reservations_quantity_live ON ??.reservations (tenant_id, environment_id, customer_id, feature_id) INCLUDE (quantity_held, expires_at)
          WHERE status = 'held' AND feature_id IS NOT NULL`,
        [schema],
      );
      // Committed holds whose event is not counted yet count too: beside each live index, one of them (the reads OR the two).
      const settling = `status = 'committed' AND commit_event IS NOT NULL AND settled_at IS NULL`;
      await db.raw(`CREATE INDEX reservations_settling_wallet ON ??.reservations (wallet_id) INCLUDE (credits_held) WHERE ${settling}`, [schema]);
      await db.raw(`CREATE INDEX reservations_settling_quantity ON ??.reservations (tenant_id, environment_id, customer_id, feature_id) WHERE ${settling}`, [schema]);
    },
    async down(db) {
      await db.raw('DROP INDEX ??.reservations_quantity_live', [schema]);
      await db.raw('DROP INDEX ??.reservations_settling_wallet', [schema]);
      await db.raw('DROP INDEX ??.reservations_settling_quantity', [schema]);
      await db.raw(
        `ALTER TABLE ??.reservations DROP CONSTRAINT reservations_kind_check,
          DROP COLUMN feature_id, DROP COLUMN entitlement, DROP COLUMN quantity_held, DROP COLUMN quantity_committed,
          DROP COLUMN commit_event, DROP COLUMN event_seen_at, DROP COLUMN settled_at,
          ALTER COLUMN wallet_id SET NOT NULL, ALTER COLUMN currency SET NOT NULL, ALTER COLUMN credits_held SET NOT NULL,
          ADD CONSTRAINT reservations_credits_held_check CHECK (credits_held > 0)`,
        [schema],
      );
    },
  };
}
