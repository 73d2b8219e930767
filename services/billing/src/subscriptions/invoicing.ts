import type { Trx } from '@billstream/db';
import type { Price } from '../prices/domain';
import type { Subscription } from './domain';
import type { PeriodStep } from './lifecycle';

/** Invoices made before a subscription's transaction (their usage read from the aggregator), written inside it. */
export interface PreparedInvoices {
  write(trx: Trx): Promise<unknown>;
}

/**
 * What the subscription service needs invoiced. invoices/ implements it
 * (invoices/subscription-invoicing.ts): it sits above subscriptions/, which name no invoice.
 */
export interface SubscriptionInvoicing {
  /**
   * A new subscription's invoices: its first period's ADVANCE charges when it starts active
   * (SUBSCRIPTION_CREATE), then those of `steps`, the periods that already ended.
   */
  forCreate(started: Subscription, steps: PeriodStep[], prices: Price[], now: Date, requestId: string): Promise<PreparedInvoices>;
  /** The invoice a transition from `before` to `after` makes (none for most). */
  forChange(before: Subscription, after: Subscription, now: Date, requestId: string): Promise<PreparedInvoices>;
  /** Invoices the subscription's ended periods and moves it to its current one, in a transaction of its own. */
  catchUp(subscriptionId: string, requestId: string): Promise<unknown>;
}
