import { billingPayersInternalApi, type Scope } from '@billstream/contracts';
import { ServiceUnavailableError, ValidationError } from '@billstream/errors';
import { InternalClient } from '@billstream/http';

/** Which live subscriptions of other customers a customer pays (billing's `invoicing_customer_id`, ADR 0047). */
export interface PayerCheck {
  payingFor(scope: Scope, customerId: string, requestId: string): Promise<{ ids: string[]; count: number }>;
}

/** Asks billing's internal route; no answer is a 503 (a customer is not deleted on a guess). */
export class HttpPayerCheck implements PayerCheck {
  private readonly client: InternalClient;

  constructor(baseUrl: () => string | undefined, internalToken: string, timeoutMs = 5000) {
    this.client = new InternalClient({ service: 'billing', baseUrl, internalToken, actor: 'customer', timeoutMs });
  }

  async payingFor(scope: Scope, customerId: string, requestId: string): Promise<{ ids: string[]; count: number }> {
    const path = billingPayersInternalApi.payingSubscriptions.path.replace(':id', encodeURIComponent(customerId));
    const { status, text } = await this.client.call(scope, 'GET', path, requestId);
    if (status !== 200) {
      throw new ServiceUnavailableError('Billing could not say whether the customer pays subscriptions of other customers; retry later', { upstream_status: status });
    }
    const body = JSON.parse(text) as { subscription_ids: string[]; count: number };
    return { ids: body.subscription_ids, count: body.count };
  }

  close(): Promise<void> {
    return this.client.close();
  }
}

/** A payer of live subscriptions cannot be deleted (docs/api/hierarchy-billing.md#deleting-a-payer). */
export function paysSubscriptionsError(id: string, paid: { ids: string[]; count: number }): ValidationError {
  return new ValidationError(
    `Customer ${id} pays ${paid.count} live subscription(s) of other customers (invoicing_customer_id), e.g. ${paid.ids.slice(0, 3).join(', ')}; cancel them first`,
    { field: 'id', value: id, subscription_ids: paid.ids, subscriptions: paid.count },
  );
}
