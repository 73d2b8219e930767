import type Decimal from 'decimal.js';
import { ValidationError } from '@billstream/errors';
import { isDecimalString } from '@billstream/money';
import { exact } from '@billstream/money';

/** A usage quantity as the calculator takes it: a decimal string, 0 or more. */
export function parseQuantity(quantity: string): Decimal {
  if (!isDecimalString(quantity) || quantity.startsWith('-')) {
    throw new ValidationError(`usage quantity "${quantity}" must be a decimal string of 0 or more`, { field: 'quantity' });
  }
  return exact(quantity);
}
