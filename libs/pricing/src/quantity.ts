import { ValidationError } from '@billstream/errors';
import { exact, isDecimalString, type Exact } from '@billstream/money';

/** A usage quantity as the calculator takes it: a decimal string, 0 or more. */
export function parseQuantity(quantity: string): Exact {
  if (!isDecimalString(quantity) || quantity.startsWith('-')) {
    throw new ValidationError(`usage quantity "${quantity}" must be a decimal string of 0 or more`, { field: 'quantity' });
  }
  return exact(quantity);
}
