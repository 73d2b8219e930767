import { ValidationError } from '@billstream/errors';
import type { Price } from '../prices/domain';
import { withOverrides } from './price-overrides';

const AT = new Date('2026-03-01T00:00:00Z');
const base = { tenantId: 't', environmentId: 'e', planId: 'plan_1', currency: 'usd', billingPeriod: 'MONTHLY', billingPeriodCount: 1, meterId: null, filterValues: null, package: null, displayName: null, taxRateIds: [] as string[], taxBehavior: null, parentPriceId: null, subscriptionId: null, status: 'active', createdAt: AT, updatedAt: AT } as const;
const fixed: Price = { ...base, id: 'price_fixed', type: 'FIXED', amount: '49', billingModel: 'FLAT_FEE', invoiceCadence: 'ADVANCE', tierMode: null, tiers: null };
const tiered: Price = { ...base, id: 'price_tiered', type: 'USAGE', amount: null, billingModel: 'TIERED', invoiceCadence: 'ARREAR', meterId: 'm', tierMode: 'VOLUME', tiers: [{ upTo: null, unitAmount: '1', flatAmount: null }] };
const tiers = [{ upTo: null, unitAmount: '0.1', flatAmount: null }];

function refusal(f: () => unknown): unknown {
  try {
    f();
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return (error as ValidationError).details?.field;
  }
  throw new Error('not refused');
}

describe('price overrides (docs/api/billing.md#price-overrides)', () => {
  it('replaces each overridden price by a subscription-scoped copy with its amount or tiers, in place', () => {
    const out = withOverrides('sub_1', [fixed, tiered], [{ priceId: 'price_tiered', tiers }, { priceId: 'price_fixed', amount: '39' }]);
    expect(out.prices.map((p) => [p.parentPriceId, p.amount, p.tiers, p.subscriptionId, p.createdAt])).toEqual([
      ['price_fixed', '39', null, 'sub_1', AT],
      ['price_tiered', null, tiers, 'sub_1', AT],
    ]);
    expect(out.prices.every((p) => p.id.startsWith('price_') && p.id !== fixed.id && p.id !== tiered.id)).toBe(true);
    expect(out.made).toHaveLength(2);
    expect(out.overrides).toEqual([
      { priceId: 'price_tiered', overridePriceId: out.prices[1]!.id, amount: null, tiers },
      { priceId: 'price_fixed', overridePriceId: out.prices[0]!.id, amount: '39', tiers: null },
    ]);
    expect(withOverrides('sub_1', [fixed], [])).toEqual({ prices: [fixed], made: [], overrides: [] });
  });

  it('refuses a price it does not bill, a second override and the wrong one of amount and tiers, naming the field', () => {
    expect(refusal(() => withOverrides('s', [fixed], [{ priceId: 'price_other', amount: '1' }]))).toBe('price_overrides.0.price_id');
    expect(refusal(() => withOverrides('s', [fixed], [{ priceId: 'price_fixed', amount: '1' }, { priceId: 'price_fixed', amount: '2' }]))).toBe('price_overrides.1.price_id');
    expect(refusal(() => withOverrides('s', [tiered], [{ priceId: 'price_tiered', amount: '1' }]))).toBe('price_overrides.0.tiers');
    expect(refusal(() => withOverrides('s', [fixed], [{ priceId: 'price_fixed', tiers }]))).toBe('price_overrides.0.amount');
  });
});
