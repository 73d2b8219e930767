import { ValidationError } from '@billstream/errors';
import { fixedLine, sumAmounts, usageLines, type Tier, type UsageCharge } from './index';

const tiers: Tier[] = [
  { upTo: '100', unitAmount: '0.10', flatAmount: null },
  { upTo: '1000', unitAmount: '0.05', flatAmount: '2' },
  { upTo: null, unitAmount: '0.01', flatAmount: '10' },
];

function validationField(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ValidationError);
    return (err as ValidationError).details?.field;
  }
  throw new Error('expected a ValidationError');
}

describe('FLAT_FEE', () => {
  it('bills usage x unit amount, rounded once half up to minor units', () => {
    const price: UsageCharge = { billingModel: 'FLAT_FEE', amount: '0.0001', currency: 'usd', displayName: 'API calls' };
    expect(usageLines(price, '12345')).toEqual([{ quantity: '12345', unitAmount: '0.0001', amount: 123, description: 'API calls' }]);
    expect(usageLines(price, '12350')[0].amount).toBe(124); // 1.235 usd: half up
    expect(usageLines(price, '12349.99')[0].amount).toBe(123);
  });

  it('rounds the line once, not per unit: 3 x 0.333 usd is 1.00 usd, not 3 x 0.33', () => {
    expect(usageLines({ billingModel: 'FLAT_FEE', amount: '0.333', currency: 'usd' }, '3')[0].amount).toBe(100);
  });

  it('knows the minor unit of the currency: jpy 0 digits, kwd 3 digits', () => {
    expect(usageLines({ billingModel: 'FLAT_FEE', amount: '1.5', currency: 'jpy' }, '3')[0].amount).toBe(5); // 4.5 yen -> 5
    expect(usageLines({ billingModel: 'FLAT_FEE', amount: '1.5', currency: 'jpy' }, '1')[0].amount).toBe(2); // 1.5 yen -> 2
    expect(usageLines({ billingModel: 'FLAT_FEE', amount: '0.0015', currency: 'kwd' }, '3')[0].amount).toBe(5); // 0.0045 kwd -> 5 fils
    expect(usageLines({ billingModel: 'FLAT_FEE', amount: '1.2345', currency: 'kwd' }, '1')[0].amount).toBe(1235);
    expect(usageLines({ billingModel: 'FLAT_FEE', amount: '1.2345', currency: 'usd' }, '1')[0].amount).toBe(123);
  });

  it('is exact where floats are not, also for long quantities and 12-decimal prices', () => {
    expect(usageLines({ billingModel: 'FLAT_FEE', amount: '0.1', currency: 'usd' }, '3')[0].amount).toBe(30);
    // 1234567.123456789012345678 x 0.000000000005 = 0.00000617283561728394506172839 usd
    expect(usageLines({ billingModel: 'FLAT_FEE', amount: '0.000000000005', currency: 'usd' }, '1234567.123456789012345678')[0].amount).toBe(0);
    // 12345678901.234999999999999999999999999999 usd has 41 significant digits: rounded to 40 on
    // the way (as Money would) it becomes ...901.235 and the line a cent too high
    const price: UsageCharge = { billingModel: 'FLAT_FEE', amount: '0.000000000001', currency: 'usd' };
    expect(usageLines(price, '12345678901234999999999.999999999999999999')[0].amount).toBe(1234567890123);
    expect(usageLines(price, '12345678901235000000000')[0].amount).toBe(1234567890124);
  });

  it('rejects a negative or malformed quantity and an unknown currency', () => {
    expect(validationField(() => usageLines({ billingModel: 'FLAT_FEE', amount: '1', currency: 'usd' }, '-1'))).toBe('quantity');
    expect(validationField(() => usageLines({ billingModel: 'FLAT_FEE', amount: '1', currency: 'usd' }, '1e3'))).toBe('quantity');
    expect(validationField(() => usageLines({ billingModel: 'FLAT_FEE', amount: '1', currency: 'abc' }, '1'))).toBe('currency');
  });

  it('refuses an amount beyond what an integer of minor units can hold exactly', () => {
    expect(validationField(() => usageLines({ billingModel: 'FLAT_FEE', amount: '1000000', currency: 'usd' }, '1000000000000'))).toBe('amount');
  });
});

describe('PACKAGE', () => {
  const up: UsageCharge = { billingModel: 'PACKAGE', amount: '5', package: { size: '100', round: 'UP' }, currency: 'usd', displayName: 'SMS' };
  const down: UsageCharge = { ...up, package: { size: '100', round: 'DOWN' } };

  it('bills whole packages, a started one counted when rounding UP', () => {
    expect(usageLines(up, '250')).toEqual([{ quantity: '3', unitAmount: '5', amount: 1500, description: 'SMS (3 x package of 100, rounded up)' }]);
    expect(usageLines(down, '250')[0]).toMatchObject({ quantity: '2', amount: 1000 });
    expect(usageLines(up, '200')[0]).toMatchObject({ quantity: '2', amount: 1000 });
    expect(usageLines(down, '200')[0]).toMatchObject({ quantity: '2', amount: 1000 });
    expect(usageLines(up, '0')[0]).toMatchObject({ quantity: '0', amount: 0 });
    expect(usageLines(up, '0.001')[0]).toMatchObject({ quantity: '1', amount: 500 });
  });

  it('takes decimal package sizes', () => {
    const gb: UsageCharge = { billingModel: 'PACKAGE', amount: '0.25', package: { size: '0.5', round: 'UP' }, currency: 'usd' };
    expect(usageLines(gb, '1.2')[0]).toMatchObject({ quantity: '3', amount: 75 });
  });
});

describe('TIERED VOLUME', () => {
  const price: UsageCharge = { billingModel: 'TIERED', tierMode: 'VOLUME', tiers, currency: 'usd', displayName: 'Calls' };

  it('bills every unit at the tier that holds the total, plus that tier flat amount; up_to is inclusive', () => {
    expect(usageLines(price, '100')).toEqual([
      { quantity: '100', unitAmount: '0.1', amount: 1000, description: 'Calls (tier 1: 0 to 100)', tier: { index: 1, from: '0', upTo: '100', unitAmount: '0.1', flatAmount: null } },
    ]);
    expect(usageLines(price, '100.5')[0]).toMatchObject({ quantity: '100.5', unitAmount: '0.05', amount: 703, tier: { index: 2 } }); // 5.025 + 2
    expect(usageLines(price, '1000')[0]).toMatchObject({ amount: 5200, tier: { index: 2 } });
    expect(usageLines(price, '5000')[0]).toMatchObject({ amount: 6000, description: 'Calls (tier 3: above 1000)', tier: { index: 3, upTo: null } });
  });

  it('bills nothing, flat amount included, for no usage', () => {
    const flatFirst: Tier[] = [{ upTo: '10', unitAmount: '1', flatAmount: '5' }, { upTo: null, unitAmount: '0.5', flatAmount: null }];
    expect(usageLines({ billingModel: 'TIERED', tierMode: 'VOLUME', tiers: flatFirst, currency: 'usd' }, '0')[0]).toMatchObject({ quantity: '0', amount: 0 });
    expect(usageLines({ billingModel: 'TIERED', tierMode: 'VOLUME', tiers: flatFirst, currency: 'usd' }, '1')[0]).toMatchObject({ amount: 600 });
  });

  it('refuses tiers that do not end open', () => {
    const closed: Tier[] = [{ upTo: '10', unitAmount: '1', flatAmount: null }];
    expect(validationField(() => usageLines({ billingModel: 'TIERED', tierMode: 'VOLUME', tiers: closed, currency: 'usd' }, '5'))).toBe('tiers');
    expect(validationField(() => usageLines({ billingModel: 'TIERED', tierMode: 'SLAB', tiers: closed, currency: 'usd' }, '5'))).toBe('tiers');
  });
});

describe('TIERED SLAB', () => {
  const price: UsageCharge = { billingModel: 'TIERED', tierMode: 'SLAB', tiers, currency: 'usd', displayName: 'Calls' };

  it('bills one line per tier reached, each with the units inside it and its flat amount', () => {
    const lines = usageLines(price, '1500');
    expect(lines.map((l) => [l.quantity, l.unitAmount, l.amount, l.tier?.index])).toEqual([
      ['100', '0.1', 1000, 1],
      ['900', '0.05', 4700, 2],
      ['500', '0.01', 1500, 3],
    ]);
    expect(sumAmounts(lines)).toBe(7200);
    expect(usageLines(price, '100').map((l) => l.quantity)).toEqual(['100']);
    expect(usageLines(price, '100.25').map((l) => l.quantity)).toEqual(['100', '0.25']);
  });

  it('makes one empty line of tier 1 for no usage', () => {
    expect(usageLines(price, '0')).toEqual([
      { quantity: '0', unitAmount: '0.1', amount: 0, description: 'Calls (tier 1: 0 to 100)', tier: { index: 1, from: '0', upTo: '100', unitAmount: '0.1', flatAmount: null } },
    ]);
  });

  it('rounds each tier line once; the total is the sum of the rounded lines', () => {
    const thirds: Tier[] = [{ upTo: '1', unitAmount: '0.005', flatAmount: null }, { upTo: null, unitAmount: '0.005', flatAmount: null }];
    const lines = usageLines({ billingModel: 'TIERED', tierMode: 'SLAB', tiers: thirds, currency: 'usd' }, '2');
    expect(lines.map((l) => l.amount)).toEqual([1, 1]); // 0.005 each, half up
    expect(sumAmounts(lines)).toBe(2);
  });
});

describe('FIXED', () => {
  it('bills quantity 1 at the amount for a whole period, without a proration factor', () => {
    expect(fixedLine({ amount: '49.99', currency: 'usd', displayName: 'Pro plan' })).toEqual({ quantity: '1', unitAmount: '49.99', amount: 4999, description: 'Pro plan' });
    expect(fixedLine({ amount: '5000', currency: 'jpy' }).amount).toBe(5000);
    expect(fixedLine({ amount: '12.3456', currency: 'kwd' }).amount).toBe(12346);
  });

  it('bills amount x proration factor on a prorated line, rounded once half up', () => {
    // 17 of 31 days: 0.548387096774 x 100 usd = 54.8387096774 usd
    expect(fixedLine({ amount: '100', currency: 'usd' }, '0.548387096774')).toEqual({
      quantity: '1',
      unitAmount: '100',
      amount: 5484,
      prorationFactor: '0.548387096774',
      description: 'Fixed charge (prorated x 0.548387096774)',
    });
    expect(fixedLine({ amount: '1000', currency: 'jpy' }, '0.500000000000').amount).toBe(500);
    expect(fixedLine({ amount: '1', currency: 'jpy' }, '0.500000000000').amount).toBe(1);
    expect(fixedLine({ amount: '1', currency: 'kwd' }, '0.333333333333').amount).toBe(333);
  });

  it('refuses a factor that is not 12 decimals between 0 and 1', () => {
    for (const bad of ['0.5', '1.5', '1.000000000001', '-0.500000000000', '0.5000000000001']) {
      expect(validationField(() => fixedLine({ amount: '1', currency: 'usd' }, bad))).toBe('proration_factor');
    }
  });
});
