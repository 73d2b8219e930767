import { exact, toDecimalString as decimalString } from '@billstream/money';
import type { LineAmount } from './domain';
import { parseQuantity } from './quantity';
import { toMinorUnits } from './rounding';

/** FLAT_FEE: one line, quantity = usage, amount = usage x unit amount. */
export function flatFeeLine(currency: string, unitAmount: string, quantity: string, description: string): LineAmount {
  const units = parseQuantity(quantity);
  return {
    quantity: decimalString(units),
    unitAmount: decimalString(exact(unitAmount)),
    amount: toMinorUnits(units.times(unitAmount), currency),
    description,
  };
}
