import type { Db } from '@billstream/db';
import type { Price } from '../prices/domain';
import type { Subscription } from '../subscriptions/domain';
import type { SubscriptionInvoicing, PreparedInvoices } from '../subscriptions/invoicing';
import type { PeriodStep } from '../subscriptions/lifecycle';
import type { InvoiceMaker } from './maker';
import type { PeriodBilling } from './period-billing';

/** The invoices of subscription creations and changes, as the subscription service asks for them. */
export class SubscriptionInvoices implements SubscriptionInvoicing {
  constructor(
    private readonly db: Db,
    private readonly maker: InvoiceMaker,
    private readonly billing: PeriodBilling,
  ) {}

  async forCreate(started: Subscription, steps: PeriodStep[], prices: Price[], now: Date, requestId: string): Promise<PreparedInvoices> {
    const first = started.status === 'active' ? this.maker.advanceInvoice(started, 'SUBSCRIPTION_CREATE', prices, now) : undefined;
    const drafts = [...(first ? [first] : []), ...(await this.maker.forSteps(started, steps, prices, now, requestId))];
    return { write: (trx) => this.maker.write(trx, drafts) };
  }

  async forChange(before: Subscription, after: Subscription, now: Date, requestId: string): Promise<PreparedInvoices> {
    const prices = await this.maker.pricesOf(this.db, before);
    const draft = await this.maker.forChange(before, after, prices, now, requestId);
    return { write: async (trx) => (draft ? this.maker.write(trx, [draft]) : 0) };
  }

  catchUp(subscriptionId: string, requestId: string): Promise<unknown> {
    return this.billing.catchUp(subscriptionId, requestId);
  }
}
