import { topupInvoice, type InvoicedTopup } from './topup-invoice';

const topup = (over: Partial<InvoicedTopup> = {}): InvoicedTopup => ({
  scope: { tenantId: 't', environmentId: 'e' },
  walletId: 'wallet_1',
  transactionId: 'wtxn_1',
  credits: '50',
  customerId: 'cust_1',
  currency: 'usd',
  topupConversionRate: '1',
  ...over,
});
const now = new Date('2026-11-26T12:00:00Z');

describe('the invoice of an invoiced top-up', () => {
  it('is one FIXED line of no price: credits x topup_conversion_rate in minor units, keyed and sourced by the transaction', () => {
    const i = topupInvoice(topup({ credits: '50', topupConversionRate: '1.5' }), now);
    expect(i).toMatchObject({
      billingReason: 'CREDIT_PURCHASE',
      subscriptionId: null,
      sourceKey: 'topup:wtxn_1',
      source: { wallet_id: 'wallet_1', transaction_id: 'wtxn_1' },
      customerId: 'cust_1',
      currency: 'usd',
      status: 'draft',
      paymentTermsDays: 0,
      subtotal: 7500,
      total: 7500,
      amountDue: 7500,
      amountRemaining: 7500,
      finalizeAfter: now,
      frozenAt: now,
    });
    expect(i.lines).toEqual([
      expect.objectContaining({
        position: 0,
        priceId: null,
        priceType: 'FIXED',
        meterId: null,
        description: 'Purchase of 50 credits',
        quantity: '50',
        unitAmount: '1.5',
        amount: 7500,
        prepaidCreditsApplied: 0,
      }),
    ]);
  });

  it('rounds once, half up, to the minor units of the wallet currency', () => {
    // 50 x 0.333 = 16.65 usd: exact in cents; 7 x 0.333 = 2.331 -> 2.33; 15 x 0.333 = 4.995 -> 5.00 (half up).
    expect(topupInvoice(topup({ topupConversionRate: '0.333' }), now).subtotal).toBe(1665);
    expect(topupInvoice(topup({ credits: '7', topupConversionRate: '0.333' }), now).subtotal).toBe(233);
    expect(topupInvoice(topup({ credits: '15', topupConversionRate: '0.333' }), now).subtotal).toBe(500);
    // jpy has no minor unit: 50 x 0.333 = 16.65 -> 17 yen; 1.5 x 1 = 1.5 -> 2 yen.
    expect(topupInvoice(topup({ currency: 'jpy', topupConversionRate: '0.333' }), now).subtotal).toBe(17);
    expect(topupInvoice(topup({ currency: 'jpy', credits: '1.5' }), now).subtotal).toBe(2);
    // kwd has three: 2.5 x 0.1234 = 0.3085 -> 0.309.
    expect(topupInvoice(topup({ currency: 'kwd', credits: '2.5', topupConversionRate: '0.1234' }), now).subtotal).toBe(309);
  });

  it('names one credit in the singular and keeps the credits exact', () => {
    expect(topupInvoice(topup({ credits: '1' }), now).lines[0].description).toBe('Purchase of 1 credit');
    expect(topupInvoice(topup({ credits: '0.000000000001' }), now).lines[0]).toMatchObject({ quantity: '0.000000000001', amount: 0 });
  });
});
