import { sumAmounts } from '@billstream/pricing';
import { ArithmeticInputError, type InvoiceArithmetic, type InvoiceTotals, type Settlement } from './domain';

/**
 * An invoice's totals (docs/api/billing.md#invoice-arithmetic) from its arithmetic and what was applied or paid
 * against it: total = subtotal − total_discount + excess_credit + Σ exclusive tax (step 6, absent:
 * 0; docs/api/taxes.md#arithmetic) − total_prepaid_credits_applied,
 * amount_due = total − pre_payment_credit_notes_amount, amount_remaining = amount_due −
 * amount_paid. Without discounts, negative lines and credit notes they are docs/api/billing.md's (total =
 * subtotal − credits = amount_due). A settlement that would make one of them negative is refused.
 */
export function invoiceTotals(a: Pick<InvoiceArithmetic, 'subtotal' | 'totalDiscount' | 'excessCredit'> & { exclusiveTax?: number }, s: Settlement): InvoiceTotals {
  const exclusiveTax = a.exclusiveTax ?? 0;
  if (!Number.isSafeInteger(exclusiveTax) || exclusiveTax < 0) throw new ArithmeticInputError(`exclusive tax ${exclusiveTax} is not a minor-unit amount`);
  for (const [name, value] of Object.entries(s)) {
    if (!Number.isSafeInteger(value) || value < 0) throw new ArithmeticInputError(`${name} ${value} is not a minor-unit amount`);
  }
  const total = sumAmounts([{ amount: a.subtotal }, { amount: -a.totalDiscount }, { amount: a.excessCredit }, { amount: exclusiveTax }, { amount: -s.totalPrepaidCreditsApplied }]);
  const amountDue = total - s.prePaymentCreditNotesAmount;
  const amountRemaining = amountDue - s.amountPaid;
  if (total < 0 || amountDue < 0 || amountRemaining < 0) {
    throw new ArithmeticInputError(
      `invoice totals would be negative: total ${total}, amount_due ${amountDue}, amount_remaining ${amountRemaining} (credits ${s.totalPrepaidCreditsApplied}, credit notes ${s.prePaymentCreditNotesAmount}, paid ${s.amountPaid})`,
    );
  }
  return {
    subtotal: a.subtotal,
    totalDiscount: a.totalDiscount,
    excessCredit: a.excessCredit,
    totalPrepaidCreditsApplied: s.totalPrepaidCreditsApplied,
    total,
    prePaymentCreditNotesAmount: s.prePaymentCreditNotesAmount,
    amountDue,
    amountPaid: s.amountPaid,
    amountRemaining,
  };
}
