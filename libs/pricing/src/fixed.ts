import { ValidationError } from '@billstream/errors';
import { exact, toDecimalString as decimalString } from '@billstream/money';
import type { FixedCharge, LineAmount } from './domain';
import { toMinorUnits } from './rounding';

const FACTOR_PATTERN = /^(0|1)\.\d{12}$/;

/**
 * FIXED: one line, quantity "1", unit amount = the price's amount. A prorated line carries its
 * factor (12 decimals, from the period math) and bills amount x factor; a whole period has none.
 */
export function fixedLine(charge: FixedCharge, prorationFactor?: string): LineAmount {
  const description = charge.displayName ?? 'Fixed charge';
  if (prorationFactor === undefined) {
    return { quantity: '1', unitAmount: decimalString(exact(charge.amount)), amount: toMinorUnits(exact(charge.amount), charge.currency), description };
  }
  if (!FACTOR_PATTERN.test(prorationFactor) || exact(prorationFactor).gt(1)) {
    throw new ValidationError(`proration factor "${prorationFactor}" must have 12 decimals and lie between 0 and 1`, { field: 'proration_factor' });
  }
  return {
    quantity: '1',
    unitAmount: decimalString(exact(charge.amount)),
    amount: toMinorUnits(exact(charge.amount).times(prorationFactor), charge.currency),
    prorationFactor,
    description: `${description} (prorated x ${prorationFactor})`,
  };
}
