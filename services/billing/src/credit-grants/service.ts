import type { Scope } from '@billstream/contracts';
import type { Db } from '@billstream/db';
import { NotFoundError, ValidationError } from '@billstream/errors';
import { newId } from '@billstream/ids';
import type { EventContext } from '@billstream/outbox';
import { planNotFound } from '../plans/service';
import type { PlanStore } from '../plans/store';
import type { SubscriptionStore } from '../subscriptions/store';
import type { ApplicationStore } from './applications-store';
import type { CreditGrantBinder } from './binder';
import type { Application, ApplicationListQuery, CreditGrant, CreditGrantListQuery, NewCreditGrant } from './domain';
import { currentPeriodStart } from './schedule';
import type { CreditGrantStore } from './store';

export function creditGrantNotFound(id: string): NotFoundError {
  return new NotFoundError(`Credit grant ${id} not found`, { field: 'id', credit_grant_id: id });
}

export interface CreditGrantServiceDeps {
  db: Db;
  grants: CreditGrantStore;
  applications: ApplicationStore;
  plans: PlanStore;
  subscriptions: SubscriptionStore;
  binder: CreditGrantBinder;
  clock: () => Date;
}

/** The credit grant API (docs/api/credit-grants.md): create on a plan or a subscription, list, get, archive, applications. */
export class CreditGrantService {
  constructor(private readonly deps: CreditGrantServiceDeps) {}

  /**
   * A plan's grant binds the plan's subscriptions created from now on (as its prices do). A
   * subscription's grant binds that subscription at once: from the grant period holding now
   * when it runs (that period is credited now), from its activation when a draft, from its
   * resume when paused; a cancelled subscription takes none.
   */
  async create(ctx: EventContext & { requestId: string }, input: NewCreditGrant): Promise<CreditGrant> {
    const now = this.deps.clock();
    const grant: CreditGrant = {
      id: newId('creditGrant'),
      tenantId: ctx.tenantId,
      environmentId: ctx.environmentId,
      ...input,
      status: 'active',
      archivedAt: null,
      createdAt: now,
      updatedAt: now,
    };
    await this.deps.db.transaction(async (trx) => {
      if (grant.planId) {
        const plan = await this.deps.plans.getForShare(trx, ctx, grant.planId);
        if (!plan) throw planNotFound(grant.planId, 'plan_id');
        if (plan.status === 'archived') throw new ValidationError(`Plan ${plan.id} is archived: it takes no new subscriptions to grant to`, { field: 'plan_id', plan_id: plan.id });
        await this.deps.grants.insert(trx, grant);
        return;
      }
      const id = grant.subscriptionId!;
      const s = await this.deps.subscriptions.getForUpdate(trx, ctx, id);
      if (!s) throw new NotFoundError(`Subscription ${id} not found`, { field: 'subscription_id', subscription_id: id });
      if (s.status === 'cancelled') throw new ValidationError(`Subscription ${id} is cancelled: it takes no grant`, { field: 'subscription_id', subscription_id: id, status: s.status });
      await this.deps.grants.insert(trx, grant);
      const live = s.status === 'active' || s.status === 'trialing';
      const startsFrom = s.status === 'draft' ? null : live ? (currentPeriodStart(s, grant, now) ?? now) : now;
      await this.deps.binder.bindOne(trx, s, grant.id, startsFrom, now);
    });
    if (grant.subscriptionId) await this.deps.binder.settle(ctx, grant.subscriptionId, ctx.requestId);
    return grant;
  }

  async get(scope: Scope, id: string): Promise<CreditGrant> {
    const grant = await this.deps.grants.get(this.deps.db, scope, id);
    if (!grant) throw creditGrantNotFound(id);
    return grant;
  }

  list(scope: Scope, q: CreditGrantListQuery): Promise<{ items: CreditGrant[]; total: number }> {
    return this.deps.grants.list(this.deps.db, scope, q);
  }

  /** Archives the grant: periods starting from now on are not granted; credits given stay, and periods already due are still credited. */
  async archive(scope: Scope, id: string): Promise<void> {
    await this.deps.db.transaction(async (trx) => {
      const grant = await this.deps.grants.getForUpdate(trx, scope, id);
      if (!grant) throw creditGrantNotFound(id);
      if (grant.status === 'active') await this.deps.grants.archive(trx, id, this.deps.clock());
    });
  }

  async applicationsOf(scope: Scope, id: string, q: ApplicationListQuery): Promise<{ items: Application[]; total: number }> {
    await this.get(scope, id);
    return this.deps.applications.listOfGrant(this.deps.db, scope, id, q);
  }
}
