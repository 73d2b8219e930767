/** Price bodies the billing tests post (docs/api/billing.md#prices): monthly, in usd. */
export const fixedPrice = { type: 'FIXED', currency: 'usd', amount: '49', billing_model: 'FLAT_FEE', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE' };

export const usagePrice = (meterId: string, extra: Record<string, unknown> = {}) => ({
  type: 'USAGE',
  currency: 'usd',
  amount: '0.5',
  billing_model: 'FLAT_FEE',
  billing_period: 'MONTHLY',
  invoice_cadence: 'ARREAR',
  meter_id: meterId,
  ...extra,
});
