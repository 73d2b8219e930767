import { TOPICS } from '@billstream/bus';
import type { Scope } from '@billstream/contracts';
import type { Db, Trx } from '@billstream/db';
import { NotFoundError, ValidationError } from '@billstream/errors';
import { newId } from '@billstream/ids';
import { newDomainEvent, writeOutbox, type EventContext } from '@billstream/outbox';
import type { CustomerDirectory, CustomerRef } from '../customers/directory';
import { assertTimeZone, type BillingCycle, type BillingPeriod } from '../periods';
import { planNotFound } from '../plans/service';
import type { PlanStore } from '../plans/store';
import type { PriceStore } from '../prices/store';
import type { CancelAt, Subscription, SubscriptionEventType, SubscriptionListQuery } from './domain';
import { SUBSCRIPTION_EVENTS } from './domain';
import { activate, cancel, pause, resume, start, stepsUntil, type Change } from './lifecycle';
import { termsOf } from './plan-terms';
import type { SubscriptionStore } from './store';
import { toSubscriptionView } from './view';

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
}

export function subscriptionNotFound(id: string): NotFoundError {
  return new NotFoundError(`Subscription ${id} not found`, { field: 'id', subscription_id: id });
}

/** Records a subscription event in the outbox, keyed by the subscription id (its events keep their order). */
export async function announce(trx: Trx, ctx: EventContext, type: SubscriptionEventType, s: Subscription): Promise<void> {
  await writeOutbox(trx, TOPICS.billingEvents, s.id, newDomainEvent(type, ctx, { subscription: toSubscriptionView(s) }));
}

export class SubscriptionService {
  constructor(
    private readonly db: Db,
    private readonly subscriptions: SubscriptionStore,
    private readonly plans: PlanStore,
    private readonly prices: PriceStore,
    private readonly customers: CustomerDirectory,
    private readonly clock: () => Date,
    private readonly published: () => void,
  ) {}

  async create(ctx: EventContext & { requestId: string }, input: NewSubscription): Promise<Subscription> {
    const timezone = assertTimeZone(input.timezone);
    const customer = await this.customers.resolve(ctx, input.customer, ctx.requestId);
    const created = await this.db.transaction(async (trx) => {
      const plan = await this.plans.getForShare(trx, ctx, input.planId);
      if (!plan) throw planNotFound(input.planId, 'plan_id');
      if (plan.status === 'archived') {
        throw new ValidationError(`Plan ${plan.id} is archived: it takes no new subscriptions`, { field: 'plan_id', plan_id: plan.id });
      }
      const active = ((await this.prices.ofPlans(trx, ctx, [plan.id])).get(plan.id) ?? []).filter((p) => p.status === 'active');
      const terms = termsOf(plan.id, active, input.currency, input.billingPeriod);
      const now = this.clock();
      const draft: Subscription = {
        id: newId('subscription'),
        tenantId: ctx.tenantId,
        environmentId: ctx.environmentId,
        customerId: customer.id,
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
        metadata: input.metadata,
        version: 1,
        createdAt: now,
        updatedAt: now,
      };
      let subscription = draft;
      if (!input.draft) {
        const startAt = input.startDate ?? now;
        subscription = caughtUp(start(draft, startAt, startAt, now), now);
      }
      await this.subscriptions.insert(trx, subscription, terms.prices.map((p) => p.id));
      await announce(trx, ctx, input.draft ? SUBSCRIPTION_EVENTS.draftCreated : SUBSCRIPTION_EVENTS.created, subscription);
      return subscription;
    });
    this.published();
    return created;
  }

  async get(scope: Scope, id: string): Promise<Subscription> {
    const s = await this.subscriptions.get(this.db, scope, id);
    if (!s) throw subscriptionNotFound(id);
    return s;
  }

  list(scope: Scope, q: SubscriptionListQuery) {
    return this.subscriptions.list(this.db, scope, q);
  }

  activate(ctx: EventContext, id: string): Promise<Subscription> {
    return this.change(ctx, id, (s, now) => activate(s, now));
  }

  pause(ctx: EventContext, id: string): Promise<Subscription> {
    return this.change(ctx, id, (s, now) => pause(s, now));
  }

  resume(ctx: EventContext, id: string): Promise<Subscription> {
    return this.change(ctx, id, (s, now) => resume(s, now));
  }

  cancel(ctx: EventContext, id: string, when: CancelAt): Promise<Subscription> {
    return this.change(ctx, id, (s, now) => cancel(s, now, when));
  }

  /**
   * One transition under the subscription's row lock: periods that ended are stepped first
   * (as the period job would), so the transition sees the subscription as it is now.
   */
  private async change(ctx: EventContext, id: string, transition: (s: Subscription, now: Date) => Change): Promise<Subscription> {
    const saved = await this.db.transaction(async (trx) => {
      const locked = await this.subscriptions.getForUpdate(trx, ctx, id);
      if (!locked) throw subscriptionNotFound(id);
      const now = this.clock();
      const steps = stepsUntil(locked, now);
      const current = steps.at(-1)?.subscription ?? locked;
      const { subscription, event } = transition(current, now);
      if (steps.length > 0) await announce(trx, ctx, steps.at(-1)!.event, current);
      const stored = await this.subscriptions.save(trx, subscription);
      await announce(trx, ctx, event, stored);
      return stored;
    });
    this.published();
    return saved;
  }
}

/** A subscription stepped through every period that already ended (a backdated start). */
export function caughtUp(s: Subscription, now: Date): Subscription {
  return stepsUntil(s, now).at(-1)?.subscription ?? s;
}
