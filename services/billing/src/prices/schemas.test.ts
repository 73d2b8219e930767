import { ValidationError } from '@billstream/errors';
import { parseOrThrow } from '@billstream/http';
import { createPlanBody, createPriceBody, updatePlanBody } from '@billstream/contracts';

const usage = {
  plan_id: 'plan_1',
  type: 'USAGE',
  currency: 'usd',
  amount: '0.0001',
  billing_model: 'FLAT_FEE',
  billing_period: 'MONTHLY',
  invoice_cadence: 'ARREAR',
  meter_id: 'meter_1',
};
const fixed = { plan_id: 'plan_1', type: 'FIXED', currency: 'eur', amount: '49', billing_model: 'FLAT_FEE', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE' };
const tiers = [
  { up_to: '100', unit_amount: '0.1' },
  { up_to: '1000', unit_amount: '0.05', flat_amount: '2' },
  { up_to: null, unit_amount: '0.01' },
];
const tiered = { ...usage, amount: undefined, billing_model: 'TIERED', tier_mode: 'SLAB', tiers };

/** details.field of the 400 the route would answer, as the edge validation makes it. */
function fieldOf(body: unknown, schema: Parameters<typeof parseOrThrow>[0] = createPriceBody): unknown {
  try {
    parseOrThrow(schema, body);
  } catch (err) {
    expect(err).toBeInstanceOf(ValidationError);
    return (err as ValidationError).details?.field;
  }
  throw new Error('expected the body to be refused');
}

describe('price request validation', () => {
  it('accepts the prices of docs/api/billing.md and writes the currency in lower case with a default count of 1', () => {
    expect(parseOrThrow(createPriceBody, { ...usage, currency: 'USD' })).toEqual({ ...usage, currency: 'usd', billing_period_count: 1 });
    expect(parseOrThrow(createPriceBody, fixed)).toMatchObject({ type: 'FIXED', currency: 'eur' });
    expect(parseOrThrow(createPriceBody, { ...usage, billing_model: 'PACKAGE', package: { size: '100', round: 'UP' } })).toMatchObject({ package: { size: '100', round: 'UP' } });
    expect(parseOrThrow(createPriceBody, tiered).tiers).toEqual([
      { up_to: '100', unit_amount: '0.1' },
      { up_to: '1000', unit_amount: '0.05', flat_amount: '2' },
      { up_to: null, unit_amount: '0.01' },
    ]);
    expect(parseOrThrow(createPriceBody, { ...tiered, tiers: [{ unit_amount: '1' }] }).tiers).toEqual([{ up_to: null, unit_amount: '1' }]);
    expect(parseOrThrow(createPriceBody, { ...usage, currency: 'jpy', amount: '0.000000000001', billing_period_count: 3 })).toMatchObject({ billing_period_count: 3 });
  });

  it('needs meter_id on a USAGE price and refuses it on a FIXED one', () => {
    expect(fieldOf({ ...usage, meter_id: undefined })).toBe('meter_id');
    expect(fieldOf({ ...fixed, meter_id: 'meter_1' })).toBe('meter_id');
    expect(fieldOf({ ...fixed, filter_values: { region: ['eu'] } })).toBe('filter_values');
  });

  it('refuses a USAGE price billed in ADVANCE with details.field invoice_cadence', () => {
    expect(fieldOf({ ...usage, invoice_cadence: 'ADVANCE' })).toBe('invoice_cadence');
    expect(fieldOf({ ...tiered, invoice_cadence: 'ADVANCE' })).toBe('invoice_cadence');
  });

  it('takes amounts with up to 12 decimals and refuses more, negative or non-string amounts', () => {
    expect(fieldOf({ ...usage, amount: '0.0000000000001' })).toBe('amount');
    expect(fieldOf({ ...usage, amount: '-1' })).toBe('amount');
    expect(fieldOf({ ...usage, amount: 1 })).toBe('amount');
    expect(fieldOf({ ...usage, amount: '1e-4' })).toBe('amount');
    expect(fieldOf({ ...tiered, tiers: [{ up_to: '10', unit_amount: '0.1234567890123' }, { up_to: null, unit_amount: '1' }] })).toBe('tiers.0.unit_amount');
    expect(fieldOf({ ...tiered, tiers: [{ up_to: '10', unit_amount: '1', flat_amount: '1.0000000000001' }, { up_to: null, unit_amount: '1' }] })).toBe('tiers.0.flat_amount');
  });

  it('needs the amount of a FLAT_FEE or PACKAGE price, and FLAT_FEE on a FIXED one', () => {
    expect(fieldOf({ ...usage, amount: undefined })).toBe('amount');
    expect(fieldOf({ ...fixed, amount: undefined })).toBe('amount');
    expect(fieldOf({ ...fixed, billing_model: 'PACKAGE', package: { size: '1', round: 'UP' } })).toBe('billing_model');
  });

  it('needs a package of size above 0 on a PACKAGE price, and only there', () => {
    expect(fieldOf({ ...usage, billing_model: 'PACKAGE' })).toBe('package');
    expect(fieldOf({ ...usage, billing_model: 'PACKAGE', package: { size: '0', round: 'UP' } })).toBe('package.size');
    expect(fieldOf({ ...usage, billing_model: 'PACKAGE', package: { size: '-5', round: 'UP' } })).toBe('package.size');
    expect(fieldOf({ ...usage, billing_model: 'PACKAGE', package: { size: '10', round: 'NEAREST' } })).toBe('package.round');
    expect(fieldOf({ ...usage, package: { size: '10', round: 'UP' } })).toBe('package');
  });

  it('needs ascending tiers ending with up_to null, a tier mode, and no amount on a TIERED price', () => {
    expect(fieldOf({ ...tiered, tiers: [{ up_to: '100', unit_amount: '1' }, { up_to: '50', unit_amount: '1' }, { up_to: null, unit_amount: '1' }] })).toBe('tiers.1.up_to');
    expect(fieldOf({ ...tiered, tiers: [{ up_to: '100', unit_amount: '1' }, { up_to: '100.0', unit_amount: '1' }, { up_to: null, unit_amount: '1' }] })).toBe('tiers.1.up_to');
    expect(fieldOf({ ...tiered, tiers: [{ up_to: '100', unit_amount: '1' }, { up_to: '200', unit_amount: '1' }] })).toBe('tiers.1.up_to');
    expect(fieldOf({ ...tiered, tiers: [{ up_to: null, unit_amount: '1' }, { up_to: null, unit_amount: '1' }] })).toBe('tiers.0.up_to');
    expect(fieldOf({ ...tiered, tiers: [{ up_to: '0', unit_amount: '1' }, { up_to: null, unit_amount: '1' }] })).toBe('tiers.0.up_to');
    expect(fieldOf({ ...tiered, tiers: [] })).toBe('tiers');
    expect(fieldOf({ ...tiered, tiers: undefined })).toBe('tiers');
    expect(fieldOf({ ...tiered, tier_mode: undefined })).toBe('tier_mode');
    expect(fieldOf({ ...tiered, amount: '1' })).toBe('amount');
    expect(fieldOf({ ...usage, tier_mode: 'VOLUME' })).toBe('tier_mode');
    expect(fieldOf({ ...usage, tiers })).toBe('tiers');
  });

  it('needs a known currency', () => {
    expect(fieldOf({ ...usage, currency: 'abc' })).toBe('currency');
    expect(fieldOf({ ...usage, currency: 'xau' })).toBe('currency');
    expect(fieldOf({ ...usage, currency: undefined })).toBe('currency');
  });

  it('refuses unknown fields, bad enums and counts', () => {
    expect(fieldOf({ ...usage, colour: 'red' })).toBe('colour');
    expect(fieldOf({ ...usage, billing_period: 'HOURLY' })).toBe('billing_period');
    expect(fieldOf({ ...usage, billing_period_count: 0 })).toBe('billing_period_count');
    expect(fieldOf({ ...usage, billing_period_count: 1.5 })).toBe('billing_period_count');
    expect(fieldOf({ ...usage, plan_id: undefined })).toBe('plan_id');
  });
});

describe('plan request validation', () => {
  const { plan_id: _planId, ...planPrice } = usage;

  it('takes a plan with its prices, without plan_id on them', () => {
    const body = parseOrThrow(createPlanBody, { name: 'Pro', lookup_key: 'pro', metadata: { tier: 'gold' }, prices: [planPrice] });
    expect(body.prices?.[0]).toMatchObject({ type: 'USAGE', currency: 'usd', billing_period_count: 1 });
    expect(parseOrThrow(updatePlanBody, { description: null })).toEqual({ description: null });
  });

  it('checks the embedded prices with the same rules, naming the price', () => {
    expect(fieldOf({ name: 'Pro', prices: [planPrice, { ...planPrice, invoice_cadence: 'ADVANCE' }] }, createPlanBody)).toBe('prices.1.invoice_cadence');
    expect(fieldOf({ name: 'Pro', prices: [usage] }, createPlanBody)).toBe('prices.0.plan_id');
    expect(fieldOf({ name: ' ' }, createPlanBody)).toBe('name');
    expect(fieldOf({ prices: [] }, createPlanBody)).toBe('name');
    expect(fieldOf({ prices: [] }, updatePlanBody)).toBe('prices');
  });
});
