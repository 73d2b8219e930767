import { toDecimalString } from '@billstream/money';
import { requestHash } from '../entries/idempotency';
import type { CustomerCreditRequest } from './domain';

/** The hash a key's credit is stored with: a repeat with another request is refused (409). Single and batch calls share it. */
export function creditHash(request: CustomerCreditRequest): string {
  return requestHash({
    op: 'customer-credit',
    customer: request.customerId,
    currency: request.currency,
    ...(request.amount ? { amount: toDecimalString(request.amount) } : { credits: toDecimalString(request.credits!) }),
    reason: request.reason,
    expiry: request.expiryDate?.toISOString() ?? null,
    priority: request.priority,
    description: request.description,
    rate: toDecimalString(request.newWallet.conversionRate),
    types: request.newWallet.allowedPriceTypes,
  });
}
