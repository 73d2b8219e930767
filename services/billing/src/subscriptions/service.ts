import type { Scope } from '@billstream/contracts';
import type { Db } from '@billstream/db';
import { ServiceUnavailableError, ValidationError } from '@billstream/errors';
import { newId } from '@billstream/ids';
import type { EventContext } from '@billstream/outbox';
import type { CustomerRef } from '../clients/customers/domain';
import type { CustomerDirectory } from '../customers/directory';
import { assertTimeZone, type BillingCycle, type BillingPeriod } from '../periods';
import { planNotFound } from '../plans/service';
import type { PlanStore } from '../plans/store';
import type { PriceStore } from '../prices/store';
import type { CancelAt, Subscription, SubscriptionListQuery } from './domain';
import { SUBSCRIPTION_EVENTS } from './domain';
import { announce, subscriptionNotFound } from './events';
import type { CouponRef, SubscriptionDiscounts } from './discounts';
import type { SubscriptionGrants } from './grants';
import type { SubscriptionInvoicing } from './invoicing';
import { activate, cancel, pause, resume, start, stepsUntil, type Change } from './lifecycle';
import { termsOf } from './plan-terms';
import { withOverrides, type PriceOverrideInput } from './price-overrides';
import type { SubscriptionStore } from './store';

export { announce, subscriptionNotFound };

function planArchived(id: string): ValidationError {
  return new ValidationError(`Plan ${id} is archived: it takes no new subscriptions`, { field: 'plan_id', plan_id: id });
}

export interface NewSubscription {
  customer: CustomerRef;
  planId: string;
  currency?: string;
  billingPeriod?: BillingPeriod;
  startDate?: Date;
  billingCycle: BillingCycle;
  timezone: string;
  trialPeriodDays?: number;
  paymentTermsDays: number;
  draft: boolean;
  metadata: Record<string, string>;
  /** Coupons to attach, in order (docs/api/coupons.md). */
  discounts?: CouponRef[];
  /** The minimum each period bills, in minor units (docs/api/billing.md#minimum-commitments). */
  commitmentAmount?: number;
  /** Prices it bills at its own amount or tiers (docs/api/billing.md#price-overrides). */
  priceOverrides?: PriceOverrideInput[];
  /** Progressive billing thresholds in minor units, ascending (docs/api/thresholds.md). */
  usageThresholds?: number[];
  /** An ancestor of the customer that pays it (docs/api/hierarchy-billing.md). */
  invoicingCustomerId?: string;
}

export interface SubscriptionServiceDeps {
  db: Db;
  subscriptions: SubscriptionStore;
  plans: PlanStore;
  prices: PriceStore;
  customers: CustomerDirectory;
  clock: () => Date;
  published: () => void;
  invoicing: SubscriptionInvoicing;
  grants?: SubscriptionGrants;
  discounts?: SubscriptionDiscounts;
}

export class SubscriptionService {
  constructor(private readonly deps: SubscriptionServiceDeps) {}

  /**
   * Creates a subscription. One that starts active gets its SUBSCRIPTION_CREATE invoice (the
   * first period's ADVANCE charges) in the same transaction, with those of every period a
   * backdated one already ended (`SubscriptionInvoicing`).
   */
  async create(ctx: EventContext & { requestId: string }, input: NewSubscription): Promise<Subscription> {
    const timezone = assertTimeZone(input.timezone);
    const customer = await this.deps.customers.resolve(ctx, input.customer, ctx.requestId);
    if (input.invoicingCustomerId !== undefined) await this.requirePayer(ctx, customer.id, input.invoicingCustomerId, ctx.requestId);
    // The plan's terms and the invoices of periods that already ended (their usage read from
    // the aggregator) are made before the transaction; it checks the plan again under a share lock.
    const plan = await this.deps.plans.get(this.deps.db, ctx, input.planId);
    if (!plan) throw planNotFound(input.planId, 'plan_id');
    if (plan.status === 'archived') throw planArchived(plan.id);
    const active = ((await this.deps.prices.ofPlans(this.deps.db, ctx, [plan.id])).get(plan.id) ?? []).filter((p) => p.status === 'active');
    const terms = termsOf(plan.id, active, input.currency, input.billingPeriod);
    const now = this.deps.clock();
    const id = newId('subscription');
    // Refused before anything is read further or written: a price it does not bill, a second override, amount for tiers.
    const billed = withOverrides(id, terms.prices, input.priceOverrides ?? []);
    const draft: Subscription = {
      id,
      tenantId: ctx.tenantId,
      environmentId: ctx.environmentId,
      customerId: customer.id,
      invoicingCustomerId: input.invoicingCustomerId ?? null,
      planId: plan.id,
      currency: terms.currency,
      billingPeriod: terms.billingPeriod,
      billingPeriodCount: terms.billingPeriodCount,
      billingCycle: input.billingCycle,
      timezone,
      status: 'draft',
      startDate: input.startDate ?? null,
      billingAnchor: null,
      currentPeriodStart: null,
      currentPeriodEnd: null,
      trialPeriodDays: input.trialPeriodDays ?? null,
      trialEnd: null,
      paymentTermsDays: input.paymentTermsDays,
      cancelAtPeriodEnd: false,
      cancelledAt: null,
      pausedAt: null,
      commitmentAmount: input.commitmentAmount ?? null,
      priceOverrides: billed.overrides,
      usageThresholds: input.usageThresholds ?? [],
      lastChangeAt: null,
      pendingChange: null,
      metadata: input.metadata,
      version: 1,
      createdAt: now,
      updatedAt: now,
    };
    const started = input.draft ? draft : start(draft, input.startDate ?? now, input.startDate ?? now, now);
    const steps = started.status === 'draft' ? [] : stepsUntil(started, now);
    const invoices = await this.deps.invoicing.forCreate(started, steps, billed.prices, now, ctx.requestId);
    const subscription = steps.at(-1)?.subscription ?? started;
    await this.deps.db.transaction(async (trx) => {
      const locked = await this.deps.plans.getForShare(trx, ctx, input.planId);
      if (!locked) throw planNotFound(input.planId, 'plan_id');
      if (locked.status === 'archived') throw planArchived(locked.id);
      await this.deps.prices.insert(trx, billed.made);
      await this.deps.subscriptions.insert(trx, subscription, billed.prices.map((p) => p.id));
      await announce(trx, ctx, input.draft ? SUBSCRIPTION_EVENTS.draftCreated : SUBSCRIPTION_EVENTS.created, subscription);
      if (input.discounts?.length) {
        if (!this.deps.discounts) throw new ValidationError('Discounts are not available', { field: 'discounts' });
        await this.deps.discounts.attachAll(trx, ctx, subscription, input.discounts, now);
      }
      await invoices.write(trx);
      await this.deps.grants?.created(trx, subscription, now);
    });
    this.deps.published();
    await this.deps.grants?.settle(ctx, subscription.id, ctx.requestId);
    return subscription;
  }

  /**
   * A subscription's payer must be an ancestor of its customer, asked of the customer service
   * (ADR 0047): itself, a sibling, a descendant, another tenant's or an unknown customer is a
   * 400 naming `invoicing_customer_id`. The payer is then known to the projection (its wallets,
   * the documents' buyer).
   */
  private async requirePayer(scope: Scope, customerId: string, payerId: string, requestId: string): Promise<void> {
    if (!(await this.deps.customers.isAncestor(scope, customerId, payerId, requestId))) {
      throw new ValidationError(`Customer ${payerId} is not an ancestor of customer ${customerId}: only a parent, grandparent, ... can pay a customer's subscription`, {
        field: 'invoicing_customer_id',
        invoicing_customer_id: payerId,
        customer_id: customerId,
      });
    }
    await this.deps.customers.resolve(scope, { id: payerId }, requestId);
  }

  /** The live subscriptions of other customers that `payerId` pays (the customer service's deletion rule, ADR 0047). */
  payingFor(scope: Scope, payerId: string): Promise<{ ids: string[]; count: number }> {
    return this.deps.subscriptions.liveThatPays(this.deps.db, scope, payerId, 100);
  }

  /** The subscription after its ended periods were invoiced (itself when none had ended). */
  private async caughtUp(s: Subscription, requestId: string): Promise<Subscription> {
    if (stepsUntil(s, this.deps.clock()).length === 0) return s;
    await this.deps.invoicing.catchUp(s.id, requestId);
    return (await this.deps.subscriptions.get(this.deps.db, s, s.id)) ?? s;
  }

  async get(scope: Scope, id: string): Promise<Subscription> {
    const s = await this.deps.subscriptions.get(this.deps.db, scope, id);
    if (!s) throw subscriptionNotFound(id);
    return s;
  }

  list(scope: Scope, q: SubscriptionListQuery) {
    return this.deps.subscriptions.list(this.deps.db, scope, q);
  }

  activate(ctx: EventContext & { requestId: string }, id: string): Promise<Subscription> {
    return this.change(ctx, id, (s, now) => activate(s, now));
  }

  pause(ctx: EventContext & { requestId: string }, id: string): Promise<Subscription> {
    return this.change(ctx, id, (s, now) => pause(s, now));
  }

  resume(ctx: EventContext & { requestId: string }, id: string): Promise<Subscription> {
    return this.change(ctx, id, (s, now) => resume(s, now));
  }

  cancel(ctx: EventContext & { requestId: string }, id: string, when: CancelAt): Promise<Subscription> {
    return this.change(ctx, id, (s, now) => cancel(s, now, when));
  }

  /**
   * One transition. Periods that ended are invoiced first (`catchUp`), then the invoice the
   * transition makes (a pause's or an immediate cancel's ARREAR charges up to now, read from the
   * aggregator; a start's or a resume's ADVANCE charges) is prepared, and the transition, its
   * event and its invoice commit together under the subscription's row lock, if the subscription
   * did not change meanwhile (else it is prepared again).
   */
  private async change(ctx: EventContext & { requestId: string }, id: string, transition: (s: Subscription, now: Date) => Change): Promise<Subscription> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const found = await this.deps.subscriptions.get(this.deps.db, ctx, id);
      if (!found) throw subscriptionNotFound(id);
      const current = await this.caughtUp(found, ctx.requestId);
      const now = this.deps.clock();
      if (stepsUntil(current, now).length > 0) continue;
      const { subscription, event } = transition(current, now);
      const invoice = await this.deps.invoicing.forChange(current, subscription, now, ctx.requestId);
      const saved = await this.deps.db.transaction(async (trx) => {
        const locked = await this.deps.subscriptions.getForUpdate(trx, ctx, id);
        if (!locked) throw subscriptionNotFound(id);
        if (locked.version !== current.version) return undefined;
        const stored = await this.deps.subscriptions.save(trx, subscription);
        await announce(trx, ctx, event, stored);
        await invoice.write(trx);
        await this.deps.grants?.changed(trx, current, stored, now);
        return stored;
      });
      if (!saved) continue;
      this.deps.published();
      await this.deps.grants?.settle(ctx, id, ctx.requestId);
      return this.caughtUp(saved, ctx.requestId);
    }
    throw new ServiceUnavailableError(`Subscription ${id} kept changing; retry`);
  }
}
