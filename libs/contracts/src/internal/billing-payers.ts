import { z } from 'zod';
import { defineRoute } from '../routes';

/**
 * Billing's internal answer to "does this customer pay live subscriptions of others?" (not in
 * ALL_ROUTES: the gateway does not route it, the OpenAPI document does not show it). The customer
 * service asks it before it deletes a customer: a payer of live subscriptions cannot be deleted
 * (docs/api/hierarchy-billing.md, ADR 0047).
 */
export const payingSubscriptionsSchema = z.object({
  customer_id: z.string(),
  /** Subscriptions not cancelled whose `invoicing_customer_id` is the customer (at most 100, by id). */
  subscription_ids: z.array(z.string()),
  /** How many there are in all. */
  count: z.number().int(),
});
export type PayingSubscriptions = z.output<typeof payingSubscriptionsSchema>;

export const billingPayersInternalApi = {
  payingSubscriptions: defineRoute({
    operationId: 'internalPayingSubscriptions',
    method: 'get',
    path: '/internal/v1/customers/:id/paying-subscriptions',
    service: 'billing',
    permission: 'subscriptions:read',
    summary: 'The live subscriptions of other customers this customer pays (invoicing_customer_id)',
    tag: 'Internal',
    params: z.strictObject({ id: z.string().min(1).max(255) }),
    query: z.strictObject({}),
    response: payingSubscriptionsSchema,
    status: 200,
    errors: [],
  }),
};
