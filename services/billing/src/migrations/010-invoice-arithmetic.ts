import type { Migration } from '@billstream/db';

/**
 * The invoice arithmetic (docs/api/billing.md#invoice-arithmetic) (ADR 0038). Expand-only: no column goes, and
 * every row written before keeps its numbers (its lines are CHARGE lines with nothing offset or
 * discounted, so net_amount = amount; its new totals are 0).
 * - Lines: `line_type` (CHARGE by default), `offset_amount`, `discount_amount`, `net_amount`,
 *   `credited_amount`, BIGINT minor units.
 * - Invoices: `total_discount`, `excess_credit`, `pre_payment_credit_notes_amount`,
 *   `post_payment_credit_notes_amount`, `subscription_customer_id`, `hosted_invoice_url`,
 *   `invoice_pdf_url`, `sequence`; the reasons SUBSCRIPTION_UPDATE and SUBSCRIPTION_THRESHOLD.
 * - `invoice_discounts`: one stored amount per (invoice, discount), replaced on recompute.
 * - Uniqueness (subscription, period start, reason, sequence) replaces (subscription, period
 *   start, reason) of migration 002: the new index is built before the old one goes, in the
 *   migration's transaction, so no moment is without the guarantee (ADR 0016).
 * - The checks of migration 002 become the general identities: the old ones are the new ones
 *   with the new columns at 0, and every row and code path satisfies both.
 */
export function invoiceArithmeticMigration(schema: string): Migration {
  return {
    name: '010_invoice_arithmetic',
    async up(db) {
      await db.raw(
        `ALTER TABLE ??.invoice_line_items
           ADD COLUMN line_type text NOT NULL DEFAULT 'CHARGE'
             CHECK (line_type IN ('CHARGE', 'COMMITMENT_TRUE_UP', 'PRORATION_CREDIT', 'THRESHOLD_DEDUCTION')),
           ADD COLUMN offset_amount bigint NOT NULL DEFAULT 0,
           ADD COLUMN discount_amount bigint NOT NULL DEFAULT 0,
           ADD COLUMN net_amount bigint NOT NULL DEFAULT 0,
           ADD COLUMN credited_amount bigint NOT NULL DEFAULT 0`,
        [schema],
      );
      await db.raw('UPDATE ??.invoice_line_items SET net_amount = amount WHERE amount <> 0', [schema]);
      await db.raw(
        `ALTER TABLE ??.invoice_line_items
           DROP CONSTRAINT invoice_line_items_amount_check,
           DROP CONSTRAINT invoice_line_items_check,
           ADD CONSTRAINT invoice_line_items_arithmetic CHECK (
             offset_amount >= 0 AND discount_amount >= 0 AND net_amount >= 0
             AND CASE WHEN line_type IN ('PRORATION_CREDIT', 'THRESHOLD_DEDUCTION')
                   THEN amount <= 0 AND offset_amount = 0 AND discount_amount = 0 AND net_amount = 0
                   ELSE amount >= 0 AND net_amount = amount - offset_amount - discount_amount END),
           ADD CONSTRAINT invoice_line_items_applied CHECK (
             prepaid_credits_applied >= 0 AND prepaid_credits_applied <= net_amount
             AND credited_amount >= 0 AND credited_amount <= net_amount)`,
        [schema],
      );
      await db.raw(
        `ALTER TABLE ??.invoices
           ADD COLUMN subscription_customer_id text,
           ADD COLUMN sequence text NOT NULL DEFAULT '',
           ADD COLUMN total_discount bigint NOT NULL DEFAULT 0,
           ADD COLUMN excess_credit bigint NOT NULL DEFAULT 0,
           ADD COLUMN pre_payment_credit_notes_amount bigint NOT NULL DEFAULT 0,
           ADD COLUMN post_payment_credit_notes_amount bigint NOT NULL DEFAULT 0,
           ADD COLUMN hosted_invoice_url text,
           ADD COLUMN invoice_pdf_url text`,
        [schema],
      );
      await db.raw('UPDATE ??.invoices SET subscription_customer_id = customer_id WHERE subscription_id IS NOT NULL', [schema]);
      await db.raw(
        `ALTER TABLE ??.invoices
           DROP CONSTRAINT invoices_billing_reason_check,
           ADD CONSTRAINT invoices_billing_reason_check CHECK (billing_reason IN (${REASONS.map((r) => `'${r}'`).join(', ')})),
           DROP CONSTRAINT invoices_check,
           DROP CONSTRAINT invoices_check1,
           ADD CONSTRAINT invoices_total CHECK (
             total_discount >= 0 AND excess_credit >= 0 AND total_prepaid_credits_applied >= 0 AND total >= 0
             AND total = subtotal - total_discount + excess_credit - total_prepaid_credits_applied),
           ADD CONSTRAINT invoices_amount_due CHECK (
             pre_payment_credit_notes_amount >= 0 AND post_payment_credit_notes_amount >= 0
             AND amount_due = total - pre_payment_credit_notes_amount AND amount_due >= 0),
           ADD CONSTRAINT invoices_amount_remaining CHECK (
             amount_paid >= 0 AND amount_remaining = amount_due - amount_paid AND amount_remaining >= 0)`,
        [schema],
      );
      await db.raw(
        `CREATE UNIQUE INDEX invoices_one_per_period_sequence ON ??.invoices (subscription_id, period_start, billing_reason, sequence)
           WHERE subscription_id IS NOT NULL`,
        [schema],
      );
      await db.raw('DROP INDEX ??.invoices_one_per_period', [schema]);
      await db.raw(
        `CREATE TABLE ??.invoice_discounts (
          invoice_id text NOT NULL REFERENCES ??.invoices (id),
          discount_id text NOT NULL,
          position integer NOT NULL,
          amount bigint NOT NULL CHECK (amount >= 0),
          PRIMARY KEY (invoice_id, discount_id),
          UNIQUE (invoice_id, position)
        )`,
        [schema, schema],
      );
    },
    async down(db) {
      await db.raw('DROP TABLE ??.invoice_discounts', [schema]);
      await db.raw(
        `CREATE UNIQUE INDEX invoices_one_per_period ON ??.invoices (subscription_id, period_start, billing_reason) WHERE subscription_id IS NOT NULL`,
        [schema],
      );
      await db.raw('DROP INDEX ??.invoices_one_per_period_sequence', [schema]);
      await db.raw(
        `ALTER TABLE ??.invoices
           DROP CONSTRAINT invoices_total,
           DROP CONSTRAINT invoices_amount_due,
           DROP CONSTRAINT invoices_amount_remaining,
           DROP CONSTRAINT invoices_billing_reason_check,
           ADD CONSTRAINT invoices_billing_reason_check CHECK (billing_reason IN (${REASONS.slice(0, 6).map((r) => `'${r}'`).join(', ')})),
           ADD CONSTRAINT invoices_check CHECK (subtotal >= 0 AND total_prepaid_credits_applied >= 0 AND total = subtotal - total_prepaid_credits_applied),
           ADD CONSTRAINT invoices_check1 CHECK (amount_due = total AND amount_paid >= 0 AND amount_remaining = amount_due - amount_paid AND amount_remaining >= 0),
           DROP COLUMN subscription_customer_id,
           DROP COLUMN sequence,
           DROP COLUMN total_discount,
           DROP COLUMN excess_credit,
           DROP COLUMN pre_payment_credit_notes_amount,
           DROP COLUMN post_payment_credit_notes_amount,
           DROP COLUMN hosted_invoice_url,
           DROP COLUMN invoice_pdf_url`,
        [schema],
      );
      await db.raw(
        `ALTER TABLE ??.invoice_line_items
           DROP CONSTRAINT invoice_line_items_arithmetic,
           DROP CONSTRAINT invoice_line_items_applied,
           ADD CONSTRAINT invoice_line_items_amount_check CHECK (amount >= 0),
           ADD CONSTRAINT invoice_line_items_check CHECK (prepaid_credits_applied >= 0 AND prepaid_credits_applied <= amount),
           DROP COLUMN line_type,
           DROP COLUMN offset_amount,
           DROP COLUMN discount_amount,
           DROP COLUMN net_amount,
           DROP COLUMN credited_amount`,
        [schema],
      );
    },
  };
}

/** The billing reasons: migration 002's six, then section 0's two. */
const REASONS = [
  'SUBSCRIPTION_CREATE',
  'SUBSCRIPTION_CYCLE',
  'SUBSCRIPTION_PAUSE',
  'SUBSCRIPTION_RESUME',
  'SUBSCRIPTION_CANCEL',
  'CREDIT_PURCHASE',
  'SUBSCRIPTION_UPDATE',
  'SUBSCRIPTION_THRESHOLD',
];
