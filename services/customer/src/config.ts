import { z } from 'zod';

/** Variables of the customer service beyond the common ones. */
export const customerEnv = {
  /**
   * Billing's base URL: before deleting a customer the service asks billing whether it pays live
   * subscriptions of other customers (`invoicing_customer_id`, ADR 0047). Unset: a deployment
   * without billing; billing then moves such subscriptions to their own customers when it
   * learns of the deletion.
   */
  BILLING_SERVICE_URL: z.string().url('must be the base URL of the billing service').optional(),
};
