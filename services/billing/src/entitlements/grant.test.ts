import { ValidationError } from '@billstream/errors';
import { changedGrant, newGrant } from './grant';

const field = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ValidationError);
    return (err as ValidationError).details?.field;
  }
  throw new Error('expected a ValidationError');
};

describe('grant fields per feature type', () => {
  it('defaults: enabled, BILLING_PERIOD, hard; a limit written canonically', () => {
    expect(newGrant('BOOLEAN', {})).toEqual({ isEnabled: true, usageLimit: null, usageResetPeriod: null, isSoftLimit: false, staticValue: null });
    expect(newGrant('METERED', { usageLimit: '10.50' })).toEqual({ isEnabled: true, usageLimit: '10.5', usageResetPeriod: 'BILLING_PERIOD', isSoftLimit: false, staticValue: null });
    expect(newGrant('METERED', { usageLimit: null }).usageLimit).toBeNull();
    expect(newGrant('STATIC', { staticValue: 'gold' }).staticValue).toBe('gold');
  });

  it('refuses fields the type does not take, and missing required ones, naming the field', () => {
    expect(field(() => newGrant('BOOLEAN', { usageLimit: '1' }))).toBe('usage_limit');
    expect(field(() => newGrant('BOOLEAN', { isSoftLimit: false }))).toBe('is_soft_limit');
    expect(field(() => newGrant('METERED', {}))).toBe('usage_limit');
    expect(field(() => newGrant('METERED', { usageLimit: '1', staticValue: 'x' }))).toBe('static_value');
    expect(field(() => newGrant('STATIC', {}))).toBe('static_value');
    expect(field(() => newGrant('STATIC', { staticValue: 'x', usageResetPeriod: 'DAILY' }))).toBe('usage_reset_period');
    const metered = newGrant('METERED', { usageLimit: '5' });
    expect(field(() => changedGrant('METERED', metered, { staticValue: 'x' }))).toBe('static_value');
    expect(field(() => changedGrant('STATIC', newGrant('STATIC', { staticValue: 'x' }), { staticValue: null }))).toBe('static_value');
    expect(changedGrant('METERED', metered, { usageLimit: null })).toMatchObject({ usageLimit: null, usageResetPeriod: 'BILLING_PERIOD' });
    expect(changedGrant('METERED', metered, { isSoftLimit: true })).toMatchObject({ usageLimit: '5', isSoftLimit: true });
  });
});
