import type { Scope } from '@billstream/contracts';
import type { Db, Trx } from '@billstream/db';
import { NotFoundError, ValidationError } from '@billstream/errors';
import type { NewPrice, Price } from './domain';
import { priceOf, type MeterCheck } from './new-price';
import type { PriceStore } from './store';

function priceNotFound(id: string): NotFoundError {
  return new NotFoundError(`Price ${id} not found`, { field: 'id', price_id: id });
}

/**
 * The plan a new price goes on, share-locked until the transaction ends so that its status
 * cannot change under the price: plans/ implements it (`PlanStore.getForShare`); it sits
 * above prices/ (a plan shows its prices), which name no plan module.
 */
export interface PlanLocks {
  getForShare(trx: Trx, scope: Scope, id: string): Promise<{ status: 'active' | 'archived' } | undefined>;
}

/** Prices: created on a plan, read, archived; never updated (a change is a new price). */
export class PriceService {
  constructor(
    private readonly db: Db,
    private readonly plans: PlanLocks,
    private readonly prices: PriceStore,
    private readonly meters: MeterCheck,
    private readonly clock: () => Date,
  ) {}

  async create(scope: Scope, planId: string, input: NewPrice, requestId: string): Promise<Price> {
    await this.meters.ensureAll(scope, [{ meterId: input.meterId, field: 'meter_id' }], requestId);
    return this.db.transaction(async (trx) => {
      const plan = await this.plans.getForShare(trx, scope, planId);
      if (!plan) throw new NotFoundError(`Plan ${planId} not found`, { field: 'plan_id', plan_id: planId });
      if (plan.status === 'archived') throw new ValidationError(`Plan ${planId} is archived`, { field: 'plan_id', plan_id: planId });
      const price = priceOf(scope, planId, input, this.clock());
      await this.prices.insert(trx, [price]);
      return price;
    });
  }

  async get(scope: Scope, id: string): Promise<Price> {
    const price = await this.prices.get(this.db, scope, id);
    if (!price) throw priceNotFound(id);
    return price;
  }

  /** Archives the price: subscriptions that bill it keep billing it. */
  async archive(scope: Scope, id: string): Promise<void> {
    if (!(await this.prices.archive(this.db, scope, id, this.clock()))) throw priceNotFound(id);
  }
}
