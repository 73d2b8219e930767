import type { Migration } from '@billstream/db';

/**
 * Invoices bear tax (docs/api/taxes.md#invoices-bearing-tax): billing's copy of each customer
 * keeps what decides its rates (`tax_exempt`, `tax_ids`, `tax_rate_ids`; the address is already
 * kept), each line its tax (`tax_amount`, `taxes` per rate, `tax_behavior`), each invoice its sums
 * (`total_tax`, the exclusive part that adds to `total`, the per-rate `tax_breakdown`), whether it
 * is reverse charged or exempt, and the buyer's tax identity as it was billed (`buyer_tax`); each
 * credit note what it returns of the tax (`tax_amount`, `total`, and per line `taxes`).
 */
export function invoiceTaxesMigration(schema: string): Migration {
  return {
    name: '026_invoice_taxes',
    async up(db) {
      await db.raw(
        `ALTER TABLE ??.customers ADD COLUMN tax_exempt text NOT NULL DEFAULT 'none' CHECK (tax_exempt IN ('none', 'exempt', 'reverse')),
           ADD COLUMN tax_ids jsonb NOT NULL DEFAULT '[]', ADD COLUMN tax_rate_ids jsonb NOT NULL DEFAULT '[]'`,
        [schema],
      );
      await db.raw(
        `ALTER TABLE ??.invoice_line_items ADD COLUMN tax_amount bigint NOT NULL DEFAULT 0 CHECK (tax_amount >= 0),
           ADD COLUMN taxes jsonb NOT NULL DEFAULT '[]',
           ADD COLUMN tax_behavior text CHECK (tax_behavior IN ('exclusive', 'inclusive'))`,
        [schema],
      );
      // Credits pay a line's net and its exclusive tax (docs/api/taxes.md#invoices-bearing-tax).
      await db.raw(
        `ALTER TABLE ??.invoice_line_items DROP CONSTRAINT invoice_line_items_applied,
           ADD CONSTRAINT invoice_line_items_applied CHECK (
             prepaid_credits_applied >= 0 AND prepaid_credits_applied <= net_amount + CASE WHEN tax_behavior = 'exclusive' THEN tax_amount ELSE 0 END
             AND credited_amount >= 0 AND credited_amount <= net_amount)`,
        [schema],
      );
      await db.raw(
        `ALTER TABLE ??.invoices ADD COLUMN total_tax bigint NOT NULL DEFAULT 0 CHECK (total_tax >= 0),
           ADD COLUMN exclusive_tax bigint NOT NULL DEFAULT 0 CHECK (exclusive_tax >= 0 AND exclusive_tax <= total_tax),
           ADD COLUMN tax_breakdown jsonb NOT NULL DEFAULT '[]',
           ADD COLUMN reverse_charge boolean NOT NULL DEFAULT false,
           ADD COLUMN tax_exempt_reason text,
           ADD COLUMN buyer_tax jsonb,
           DROP CONSTRAINT invoices_total,
           ADD CONSTRAINT invoices_total CHECK (
             total_discount >= 0 AND excess_credit >= 0 AND total_prepaid_credits_applied >= 0 AND total >= 0
             AND total = subtotal - total_discount + excess_credit + exclusive_tax - total_prepaid_credits_applied)`,
        [schema],
      );
      await db.raw(`ALTER TABLE ??.credit_notes ADD COLUMN tax_amount bigint NOT NULL DEFAULT 0 CHECK (tax_amount >= 0), ADD COLUMN total bigint`, [schema]);
      await db.raw('UPDATE ??.credit_notes SET total = amount', [schema]);
      // The money order works on the note's total: its lines' amounts plus their exclusive tax.
      await db.raw(
        `ALTER TABLE ??.credit_notes ALTER COLUMN total SET NOT NULL, DROP CONSTRAINT credit_notes_amounts,
           ADD CONSTRAINT credit_notes_amounts CHECK (
             amount > 0 AND pre_payment_amount >= 0 AND wallet_amount >= 0 AND refund_amount >= 0
             AND total >= amount AND total = pre_payment_amount + wallet_amount + refund_amount)`,
        [schema],
      );
      await db.raw(`ALTER TABLE ??.credit_note_lines ADD COLUMN tax_amount bigint NOT NULL DEFAULT 0, ADD COLUMN taxes jsonb NOT NULL DEFAULT '[]'`, [schema]);
    },
    async down(db) {
      await db.raw('ALTER TABLE ??.credit_note_lines DROP COLUMN tax_amount, DROP COLUMN taxes', [schema]);
      await db.raw(
        `ALTER TABLE ??.credit_notes DROP CONSTRAINT credit_notes_amounts, DROP COLUMN tax_amount, DROP COLUMN total,
           ADD CONSTRAINT credit_notes_amounts CHECK (
             amount > 0 AND pre_payment_amount >= 0 AND wallet_amount >= 0 AND refund_amount >= 0
             AND amount = pre_payment_amount + wallet_amount + refund_amount)`,
        [schema],
      );
      await db.raw(
        `ALTER TABLE ??.invoices DROP CONSTRAINT invoices_total, ADD CONSTRAINT invoices_total CHECK (
           total_discount >= 0 AND excess_credit >= 0 AND total_prepaid_credits_applied >= 0 AND total >= 0
           AND total = subtotal - total_discount + excess_credit - total_prepaid_credits_applied)`,
        [schema],
      );
      await db.raw(
        `ALTER TABLE ??.invoice_line_items DROP CONSTRAINT invoice_line_items_applied, ADD CONSTRAINT invoice_line_items_applied CHECK (
           prepaid_credits_applied >= 0 AND prepaid_credits_applied <= net_amount AND credited_amount >= 0 AND credited_amount <= net_amount)`,
        [schema],
      );
      await db.raw(
        'ALTER TABLE ??.invoices DROP COLUMN total_tax, DROP COLUMN exclusive_tax, DROP COLUMN tax_breakdown, DROP COLUMN reverse_charge, DROP COLUMN tax_exempt_reason, DROP COLUMN buyer_tax',
        [schema],
      );
      await db.raw('ALTER TABLE ??.invoice_line_items DROP COLUMN tax_amount, DROP COLUMN taxes, DROP COLUMN tax_behavior', [schema]);
      await db.raw('ALTER TABLE ??.customers DROP COLUMN tax_exempt, DROP COLUMN tax_ids, DROP COLUMN tax_rate_ids', [schema]);
    },
  };
}
