import type { Scope } from '@billstream/contracts';
import { currentPlanSince, type Subscription } from './domain';
import type { Db } from '@billstream/db';
import { ValidationError } from '@billstream/errors';
import type { CustomerDirectory } from '../customers/directory';
import type { CustomerStore } from '../customers/store';
import type { Meters, UsageQuery } from '../clients/meters/domain';
import type { Price } from '../prices/domain';
import type { PriceStore } from '../prices/store';
import { billedQuantity, chargeOf } from '../prices/charge';
import { sumAmounts, usageLines, type LineAmount } from '@billstream/pricing';
import { subscriptionNotFound } from './events';
import type { SubscriptionStore } from './store';

/** The aggregator's batch limit (ADR 0014, amendment). */
const MAX_QUERIES = 1000;

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

/** A customer's current periods (docs/api/hierarchy-billing.md): each subscription's usage and the totals per currency. */
export interface CustomerUsage {
  customerId: string;
  asOf: Date;
  subscriptions: SubscriptionUsage[];
  totals: Array<{ currency: string; amount: number }>;
}

export interface UsageServiceDeps {
  db: Db;
  subscriptions: SubscriptionStore;
  prices: PriceStore;
  customers: CustomerStore;
  meters: Meters;
  clock: () => Date;
  directory?: CustomerDirectory;
}

/**
 * The current period's usage of subscriptions: each USAGE price's meter aggregated by the
 * ingestion-aggregator over [period start, period end) for the subscription's customer,
 * restricted by the price's filter_values, and priced with the calculator (one batched
 * aggregator call per 1,000 queries). A trial bills nothing: its amounts are 0.
 */
export class UsageService {
  constructor(private readonly deps: UsageServiceDeps) {}

  async current(scope: Scope, id: string, requestId: string): Promise<SubscriptionUsage> {
    const s = await this.deps.subscriptions.get(this.deps.db, scope, id);
    if (!s) throw subscriptionNotFound(id);
    if (!s.currentPeriodStart || !s.currentPeriodEnd) {
      throw new ValidationError(`Subscription ${id} is a draft: it has no period yet`, { field: 'status', status: s.status });
    }
    const [usage] = await this.usageOf(scope, [s], requestId);
    if (!usage) throw subscriptionNotFound(id);
    return usage;
  }

  /**
   * The current periods of the customer's active and trialing subscriptions, and with
   * `includeChildren` its descendants' (billing's projection of the hierarchy), by subscription
   * id; totals per currency, never mixed. An unknown or deleted customer is a 404.
   */
  async ofCustomer(scope: Scope, customerId: string, includeChildren: boolean, requestId: string): Promise<CustomerUsage> {
    if (this.deps.directory) await this.deps.directory.resolve(scope, { id: customerId }, requestId);
    const ids = includeChildren ? [customerId, ...(await this.deps.customers.descendants(this.deps.db, scope, customerId))] : [customerId];
    const running = (await this.deps.subscriptions.runningOf(this.deps.db, scope, ids)).filter((s) => s.currentPeriodStart && s.currentPeriodEnd);
    const subscriptions = await this.usageOf(scope, running, requestId);
    const totals = new Map<string, number>();
    for (const u of subscriptions) totals.set(u.currency, sumAmounts([{ amount: totals.get(u.currency) ?? 0 }, u]));
    return {
      customerId,
      asOf: subscriptions[0]?.asOf ?? this.deps.clock(),
      subscriptions,
      totals: [...totals].sort(([a], [b]) => a.localeCompare(b)).map(([currency, amount]) => ({ currency, amount })),
    };
  }

  private async usageOf(scope: Scope, subs: Subscription[], requestId: string): Promise<SubscriptionUsage[]> {
    const asOf = this.deps.clock();
    const known = await this.deps.customers.getByIds(this.deps.db, subs.map((s) => s.customerId));
    const billed = await Promise.all(subs.map(async (s) => this.deps.prices.getMany(this.deps.db, scope, await this.deps.subscriptions.priceIds(this.deps.db, s.id))));
    const queries: Array<UsageQuery & { meterId: string }> = [];
    const at: Array<{ sub: number; price: Price }> = [];
    subs.forEach((s, i) => {
      const customer = known.get(s.customerId);
      if (!customer) return;
      for (const price of billed[i]!.filter((p) => p.type === 'USAGE' && p.meterId)) {
        queries.push({ meterId: price.meterId!, externalCustomerId: customer.externalId, from: currentPlanSince(s)!, to: s.currentPeriodEnd!, filterValues: price.filterValues });
        at.push({ sub: i, price });
      }
    });
    const quantities: string[] = [];
    for (let from = 0; from < queries.length; from += MAX_QUERIES) {
      quantities.push(...(await this.deps.meters.usageMany(scope, queries.slice(from, from + MAX_QUERIES), requestId)));
    }
    const items = subs.map((): PriceUsage[] => []);
    at.forEach(({ sub, price }, i) => {
      const quantity = billedQuantity(quantities[i]!);
      const lines = subs[sub]!.status === 'trialing' ? [] : usageLines(chargeOf(price), quantity);
      items[sub]!.push({ price, quantity, amount: sumAmounts(lines), lines });
    });
    return subs.flatMap((s, i) =>
      known.has(s.customerId)
        ? [
            {
              subscriptionId: s.id,
              customerId: s.customerId,
              currency: s.currency,
              periodStart: s.currentPeriodStart!,
              periodEnd: s.currentPeriodEnd!,
              asOf,
              amount: sumAmounts(items[i]!),
              items: items[i]!,
            },
          ]
        : [],
    );
  }
}
