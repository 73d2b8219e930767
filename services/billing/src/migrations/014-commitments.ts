import type { Migration } from '@billstream/db';

/**
 * Minimum commitments and price overrides (docs/api/billing.md#minimum-commitments, docs/api/billing.md#price-overrides, ADR 0042). A subscription's
 * `commitment_amount` in minor units of its currency, null without one: the invoice closing a
 * period adds a COMMITMENT_TRUE_UP line (a line type since migration 010). A price override is
 * a price of its own (immutable like every price), scoped to one subscription
 * (`subscription_id`) and made from a plan's price (`parent_price_id`): the subscription bills
 * it (`subscription_prices`) instead of the parent, and the plan does not list it;
 * `subscriptions.price_overrides` keeps what was asked, as the subscription shows it.
 * Expand-only: new nullable or defaulted columns with checks.
 */
export function commitmentsMigration(schema: string): Migration {
  return {
    name: '014_commitments',
    async up(db) {
      await db.raw(
        'ALTER TABLE ??.subscriptions ADD COLUMN commitment_amount bigint CONSTRAINT subscriptions_commitment_amount CHECK (commitment_amount >= 0)',
        [schema],
      );
      await db.raw(`ALTER TABLE ??.subscriptions ADD COLUMN price_overrides jsonb NOT NULL DEFAULT '[]'`, [schema]);
      await db.raw(
        `ALTER TABLE ??.prices
           ADD COLUMN parent_price_id text REFERENCES ??.prices (id),
           ADD COLUMN subscription_id text,
           ADD CONSTRAINT prices_override CHECK ((parent_price_id IS NULL) = (subscription_id IS NULL))`,
        [schema, schema],
      );
    },
    async down(db) {
      await db.raw('ALTER TABLE ??.prices DROP CONSTRAINT prices_override, DROP COLUMN subscription_id, DROP COLUMN parent_price_id', [schema]);
      await db.raw('ALTER TABLE ??.subscriptions DROP COLUMN price_overrides', [schema]);
      await db.raw('ALTER TABLE ??.subscriptions DROP COLUMN commitment_amount', [schema]);
    },
  };
}
