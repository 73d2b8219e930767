import type { Scope } from '@billstream/contracts';
import { currentPlanSince } from './domain';
import type { Db } from '@billstream/db';
import { ValidationError } from '@billstream/errors';
import type { CustomerStore } from '../customers/store';
import type { Meters } from '../clients/meters/domain';
import type { Price } from '../prices/domain';
import type { PriceStore } from '../prices/store';
import { chargeOf } from '../prices/charge';
import { sumAmounts, usageLines, type LineAmount } from '../pricing';
import { subscriptionNotFound } from './events';
import type { SubscriptionStore } from './store';

export interface PriceUsage {
  price: Price;
  quantity: string;
  amount: number;
  lines: LineAmount[];
}

export interface SubscriptionUsage {
  subscriptionId: string;
  customerId: string;
  currency: string;
  periodStart: Date;
  periodEnd: Date;
  asOf: Date;
  amount: number;
  items: PriceUsage[];
}

/**
 * The current period's usage of a subscription: each USAGE price's meter aggregated by the
 * ingestion-aggregator over [period start, period end) for the customer, restricted by the
 * price's filter_values, and priced with the calculator. A trial bills nothing: its amounts are 0.
 */
export class UsageService {
  constructor(
    private readonly db: Db,
    private readonly subscriptions: SubscriptionStore,
    private readonly prices: PriceStore,
    private readonly customers: CustomerStore,
    private readonly meters: Meters,
    private readonly clock: () => Date,
  ) {}

  async current(scope: Scope, id: string, requestId: string): Promise<SubscriptionUsage> {
    const s = await this.subscriptions.get(this.db, scope, id);
    if (!s) throw subscriptionNotFound(id);
    if (!s.currentPeriodStart || !s.currentPeriodEnd) {
      throw new ValidationError(`Subscription ${id} is a draft: it has no period yet`, { field: 'status', status: s.status });
    }
    const customer = await this.customers.getById(this.db, s.customerId);
    if (!customer) throw subscriptionNotFound(id);
    const billed = await this.prices.getMany(this.db, scope, await this.subscriptions.priceIds(this.db, s.id));
    const items: PriceUsage[] = [];
    for (const price of billed.filter((p) => p.type === 'USAGE' && p.meterId)) {
      const quantity = await this.meters.usage(
        scope,
        price.meterId!,
        { externalCustomerId: customer.externalId, from: currentPlanSince(s)!, to: s.currentPeriodEnd, filterValues: price.filterValues },
        requestId,
      );
      const lines = s.status === 'trialing' ? [] : usageLines(chargeOf(price), quantity);
      items.push({ price, quantity, amount: sumAmounts(lines), lines });
    }
    return {
      subscriptionId: s.id,
      customerId: s.customerId,
      currency: s.currency,
      periodStart: s.currentPeriodStart,
      periodEnd: s.currentPeriodEnd,
      asOf: this.clock(),
      amount: sumAmounts(items),
      items,
    };
  }
}
