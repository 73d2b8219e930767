import type { Migration } from '@billstream/db';

/**
 * Coupons and discounts (docs/api/coupons.md, ADR 0040). `coupons` holds a coupon's terms
 * and `times_redeemed`, counted under the coupon's row lock when a discount is attached (so
 * `max_redemptions` holds under concurrency; the check makes it a database fact as well);
 * `subscription_discounts` is one coupon attached to one subscription, in attach order
 * (`position`). How many billed periods a discount covered is not a counter: it is the distinct
 * `periods` (the billed periods' starts) of the `invoice_discounts` rows (migration 010) of the
 * invoices that carry it, so a retried or repeated period job never counts a period twice.
 * Expand-only: new tables, a new column with a default.
 */
export function couponsMigration(schema: string): Migration {
  return {
    name: '012_coupons',
    async up(db) {
      await db.raw(
        `CREATE TABLE ??.coupons (
          id text PRIMARY KEY,
          tenant_id text NOT NULL,
          environment_id text NOT NULL,
          name text NOT NULL,
          code text,
          type text NOT NULL,
          percent_off numeric,
          amount_off bigint,
          currency text,
          duration text NOT NULL,
          duration_in_periods integer,
          applies_to_price_ids text[],
          max_redemptions integer,
          redeem_by timestamptz,
          times_redeemed integer NOT NULL DEFAULT 0,
          metadata jsonb NOT NULL DEFAULT '{}',
          status text NOT NULL,
          archived_at timestamptz,
          version integer NOT NULL DEFAULT 1,
          created_at timestamptz NOT NULL,
          updated_at timestamptz NOT NULL,
          CONSTRAINT coupons_type CHECK (
            (type = 'PERCENTAGE' AND percent_off > 0 AND percent_off <= 100 AND amount_off IS NULL AND currency IS NULL)
            OR (type = 'FIXED_AMOUNT' AND percent_off IS NULL AND amount_off > 0 AND currency IS NOT NULL)),
          CONSTRAINT coupons_duration CHECK (
            (duration = 'REPEATING' AND duration_in_periods BETWEEN 1 AND 1000)
            OR (duration IN ('ONCE', 'FOREVER') AND duration_in_periods IS NULL)),
          CONSTRAINT coupons_redemptions CHECK (times_redeemed >= 0 AND (max_redemptions IS NULL OR times_redeemed <= max_redemptions)),
          CONSTRAINT coupons_status CHECK (status IN ('active', 'archived') AND (status = 'archived') = (archived_at IS NOT NULL))
        )`,
        [schema],
      );
      await db.raw('CREATE UNIQUE INDEX coupons_code ON ??.coupons (tenant_id, environment_id, code) WHERE code IS NOT NULL', [schema]);
      await db.raw('CREATE INDEX coupons_created ON ??.coupons (tenant_id, environment_id, created_at, id)', [schema]);
      await db.raw(
        `CREATE TABLE ??.subscription_discounts (
          id text PRIMARY KEY,
          tenant_id text NOT NULL,
          environment_id text NOT NULL,
          subscription_id text NOT NULL REFERENCES ??.subscriptions (id),
          coupon_id text NOT NULL REFERENCES ??.coupons (id),
          position integer NOT NULL,
          removed_at timestamptz,
          created_at timestamptz NOT NULL,
          CONSTRAINT subscription_discounts_once UNIQUE (subscription_id, coupon_id),
          CONSTRAINT subscription_discounts_order UNIQUE (subscription_id, position)
        )`,
        [schema, schema, schema],
      );
      await db.raw("ALTER TABLE ??.invoice_discounts ADD COLUMN periods timestamptz[] NOT NULL DEFAULT '{}'", [schema]);
      await db.raw('CREATE INDEX invoice_discounts_of_discount ON ??.invoice_discounts (discount_id)', [schema]);
    },
    async down(db) {
      await db.raw('DROP INDEX ??.invoice_discounts_of_discount', [schema]);
      await db.raw('ALTER TABLE ??.invoice_discounts DROP COLUMN periods', [schema]);
      await db.raw('DROP TABLE ??.subscription_discounts', [schema]);
      await db.raw('DROP TABLE ??.coupons', [schema]);
    },
  };
}
