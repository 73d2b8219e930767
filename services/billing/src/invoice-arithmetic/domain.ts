import type { InvoiceLineType } from '@billstream/contracts';
import { NEGATIVE_LINE_TYPES } from '@billstream/contracts';

/**
 * The invoice arithmetic (docs/api/billing.md#invoice-arithmetic) (ADR 0038): its inputs and results, all
 * money in integer minor units of the invoice currency (ADR 0037).
 */

/** One line as the arithmetic sees it. */
export interface ArithmeticLine {
  id: string;
  /** The line's order on the invoice: offsets and ties go first line first. */
  position: number;
  lineType: InvoiceLineType;
  /** A THRESHOLD_DEDUCTION offsets the lines of its price; null on lines of no price. */
  priceId: string | null;
  /** As priced, rounded once: >= 0 on CHARGE and COMMITMENT_TRUE_UP, <= 0 on the negative types. */
  amount: number;
}

/**
 * A discount of the invoice (section 3), applied in the order given (attach order) to what the
 * lines of `appliesTo` (ids of CHARGE or COMMITMENT_TRUE_UP lines) have left.
 */
export type DiscountInput =
  | { discountId: string; kind: 'PERCENTAGE'; /** A decimal string in [0, 100]. */ percent: string; appliesTo: readonly string[] }
  | { discountId: string; kind: 'FIXED_AMOUNT'; /** What is left of the amount off for this invoice's period. */ remaining: number; appliesTo: readonly string[] };

export interface ArithmeticInput {
  lines: readonly ArithmeticLine[];
  discounts?: readonly DiscountInput[];
}

/** A line's money after steps (2) to (5). */
export interface LineMoney {
  id: string;
  offsetAmount: number;
  discountAmount: number;
  /** amount - offset_amount - discount_amount, >= 0; 0 on negative lines. */
  netAmount: number;
}

/** What a negative line took off a billing line (steps 2 and 4). */
export interface Offset {
  fromLineId: string;
  toLineId: string;
  amount: number;
}

export interface DiscountAmount {
  discountId: string;
  amount: number;
  /**
   * The billed periods (their starts) the discount covered on the invoice (coupons, ADR 0040):
   * set by the coupon step, stored with the amount; the arithmetic neither reads nor sets it.
   */
  periods?: Date[];
  /**
   * A FIXED_AMOUNT discount's amount in each of `periods` (same order; ADR 0040, amendment):
   * what each billed period took of its amount_off on the invoice. Set by the coupon step.
   */
  periodAmounts?: number[];
}

/** The invoice's arithmetic before credits, credit notes and payments. */
export interface InvoiceArithmetic {
  /** In the order of the input lines. */
  lines: LineMoney[];
  offsets: Offset[];
  /** Σ amount. */
  subtotal: number;
  /** Σ discounts[].amount = Σ lines' discount_amount. */
  totalDiscount: number;
  /** One per input discount, in input order (0 when it found nothing left). */
  discounts: DiscountAmount[];
  /** What negative lines could not offset: credited to the PRE_PAID wallet at finalization. */
  excessCredit: number;
}

/** What is applied or paid against an invoice's net amounts. */
export interface Settlement {
  totalPrepaidCreditsApplied: number;
  prePaymentCreditNotesAmount: number;
  amountPaid: number;
}

export interface InvoiceTotals extends Settlement {
  subtotal: number;
  totalDiscount: number;
  excessCredit: number;
  /** subtotal - total_discount + excess_credit - total_prepaid_credits_applied. */
  total: number;
  /** total - pre_payment_credit_notes_amount. */
  amountDue: number;
  /** amount_due - amount_paid. */
  amountRemaining: number;
}

const NEGATIVE: ReadonlySet<InvoiceLineType> = new Set(NEGATIVE_LINE_TYPES);

/** PRORATION_CREDIT and THRESHOLD_DEDUCTION: net 0, no discount or offset of their own. */
export function isNegativeLine(type: InvoiceLineType): boolean {
  return NEGATIVE.has(type);
}

/**
 * Inputs the arithmetic refuses: they come from billing's own code (the maker, later plan
 * changes and coupons), never straight from a request, so one is a bug, answered as a 500.
 */
export class ArithmeticInputError extends Error {
  override readonly name = 'ArithmeticInputError';
}
