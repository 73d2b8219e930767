import type { Scope } from '@billstream/contracts';
import { newId } from '@billstream/ids';
import { exact, toDecimalString } from '@billstream/money';
import { chargeLine, priceInvoice, type Invoice } from '../invoices/domain';
import { toMinorUnits } from '@billstream/pricing';

/** A pending PURCHASED_CREDIT_INVOICED credit of a wallet, and the wallet's terms. */
export interface InvoicedTopup {
  scope: Scope;
  walletId: string;
  transactionId: string;
  /** The credits bought (decimal string). */
  credits: string;
  customerId: string;
  currency: string;
  /** The wallet's topup_conversion_rate: the price of one credit in major units (decimal string). */
  topupConversionRate: string;
}

/** One invoice per wallet transaction: the key a redelivered event finds taken. */
export const topupSourceKey = (transactionId: string) => `topup:${transactionId}`;

function describe(credits: string): string {
  return `Purchase of ${credits} ${exact(credits).eq(1) ? 'credit' : 'credits'}`;
}

/**
 * The draft invoice of an invoiced top-up (docs/api/billing.md#invoiced-top-ups): CREDIT_PURCHASE,
 * no subscription, one FIXED line of no price for credits x topup_conversion_rate, rounded once
 * half up to minor units of the wallet currency. Due on finalization (payment_terms_days 0: no
 * customer or wallet setting says otherwise), finalized at once, its line frozen from the start.
 */
export function topupInvoice(t: InvoicedTopup, now: Date): Invoice {
  const credits = toDecimalString(t.credits);
  const rate = toDecimalString(t.topupConversionRate);
  const amount = toMinorUnits(exact(credits).times(rate), t.currency);
  const money = priceInvoice([
    {
      id: newId('invoiceLineItem'),
      position: 0,
      priceId: null,
      priceType: 'FIXED' as const,
      meterId: null,
      description: describe(credits),
      quantity: credits,
      unitAmount: rate,
      ...chargeLine(amount),
      prorationFactor: null,
      prepaidCreditsApplied: 0,
      periodStart: null,
      periodEnd: null,
    },
  ]);
  return {
    id: newId('invoice'),
    tenantId: t.scope.tenantId,
    environmentId: t.scope.environmentId,
    customerId: t.customerId,
    subscriptionId: null,
    subscriptionCustomerId: null,
    billingReason: 'CREDIT_PURCHASE',
    sequence: '',
    sourceKey: topupSourceKey(t.transactionId),
    source: { wallet_id: t.walletId, transaction_id: t.transactionId },
    status: 'draft',
    paymentStatus: 'pending',
    currency: t.currency.toLowerCase(),
    periodStart: null,
    periodEnd: null,
    paymentTermsDays: 0,
    dueDate: null,
    overdue: false,
    ...money,
    postPaymentCreditNotesAmount: 0,
    hostedInvoiceUrl: null,
    invoicePdfUrl: null,
    invoiceNumber: null,
    finalizeAfter: now,
    frozenAt: now,
    finalizedAt: null,
    voidedAt: null,
    refundState: null,
    settleState: null,
    version: 1,
    createdAt: now,
    updatedAt: now,
  };
}
