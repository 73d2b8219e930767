import { NotFoundError } from '@billstream/errors';
import { SUBSCRIPTION_EVENTS, type Subscription } from '../subscriptions/domain';
import { announce, subscriptionNotFound } from '../subscriptions/events';
import { ChangePlan, type ChangeResult, type Ctx, type PlanChangeDeps } from './change-plan';
import type { PlanChange } from './domain';

export { changeInstant, type ChangeResult, type PlanChangeDeps } from './change-plan';

/**
 * Plan changes (docs/api/plan-changes.md, ADR 0043): a change and its preview are the "change a
 * plan" workflow (`change-plan.ts`); a pending change can be dropped.
 */
export class PlanChangeService {
  private readonly workflow: ChangePlan;

  constructor(private readonly deps: PlanChangeDeps) {
    this.workflow = new ChangePlan(deps);
  }

  change(ctx: Ctx, id: string, change: PlanChange): Promise<ChangeResult> {
    return this.workflow.change(ctx, id, change);
  }

  /** The answer the change would give now, with nothing stored: the same code, its transaction rolled back. */
  preview(ctx: Ctx, id: string, change: PlanChange): Promise<ChangeResult & { effectiveAt: Date }> {
    return this.workflow.preview(ctx, id, change);
  }

  /** DELETE .../pending_change: the change waiting for the period end is dropped. */
  async cancelPending(ctx: Ctx, id: string): Promise<Subscription> {
    const saved = await this.deps.db.transaction(async (trx) => {
      const locked = await this.deps.subscriptions.getForUpdate(trx, ctx, id);
      if (!locked) throw subscriptionNotFound(id);
      if (!locked.pendingChange) throw new NotFoundError(`Subscription ${id} has no pending change`, { field: 'pending_change', subscription_id: id });
      const stored = await this.deps.subscriptions.save(trx, { ...locked, pendingChange: null, updatedAt: this.deps.clock() });
      await announce(trx, ctx, SUBSCRIPTION_EVENTS.updated, stored);
      return stored;
    });
    this.deps.published();
    return saved;
  }
}
