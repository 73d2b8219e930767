import type { invoiceAllocationSchema, invoicePaymentSchema, invoiceRefundSchema } from '@billstream/contracts';
import { toDecimalString } from '@billstream/money';
import type { z } from 'zod';
import type { Allocation, DebitPart, PaymentResult, Refund } from './domain';

/** Minor units on the wire: JSON integers (they are at most an invoice line's amount, below 2^53). */
const minor = (v: DebitPart['amount']) => v.toNumber();

const debitView = (p: DebitPart) => ({ wallet_id: p.walletId, transaction_id: p.transactionId, credits: toDecimalString(p.credits), amount: minor(p.amount) });

export function allocationView(a: Allocation): z.output<typeof invoiceAllocationSchema> {
  return {
    invoice_id: a.invoiceId,
    status: a.status,
    prepaid: a.prepaid && { ...debitView(a.prepaid), lines: a.prepaid.lines.map((l) => ({ id: l.id, amount: minor(l.amount) })) },
    postpaid: a.postpaid && debitView(a.postpaid),
  };
}

export function paymentView(p: PaymentResult): z.output<typeof invoicePaymentSchema> {
  if (p.status === 'voided') return { status: 'voided', transaction_id: null, credits: null };
  return { status: 'paid', transaction_id: p.transactionId, credits: toDecimalString(p.credits) };
}

export function refundsView(refunds: Refund[]): z.output<typeof invoiceRefundSchema> {
  return {
    refunds: refunds.map((r) => ({
      wallet_id: r.walletId,
      transaction_id: r.transactionId,
      credits: toDecimalString(r.credits),
      debit_transaction_id: r.debitTransactionId,
      ...(r.skipped ? { skipped: true } : {}),
    })),
  };
}
