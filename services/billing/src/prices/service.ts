import type { Scope } from '@billstream/contracts';
import type { Db, Trx } from '@billstream/db';
import { NotFoundError, ValidationError } from '@billstream/errors';
import type { NewPrice, Price } from './domain';
import { priceOf, type MeterCheck } from './new-price';
import type { PriceStore } from './store';
import type { TaxRateRefs } from '../taxes/refs';

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

export interface PriceServiceDeps {
  db: Db;
  plans: PlanLocks;
  prices: PriceStore;
  meters: MeterCheck;
  taxRates: TaxRateRefs;
  clock: () => Date;
}

/** Prices: created on a plan, read, archived; never updated (a change is a new price). */
export class PriceService {
  constructor(private readonly deps: PriceServiceDeps) {}

  async create(scope: Scope, planId: string, input: NewPrice, requestId: string): Promise<Price> {
    await this.deps.meters.ensureAll(scope, [{ meterId: input.meterId, field: 'meter_id' }], requestId);
    await this.deps.taxRates.ensureActive(this.deps.db, scope, [{ ids: input.taxRateIds, field: 'tax_rate_ids' }]);
    return this.deps.db.transaction(async (trx) => {
      const plan = await this.deps.plans.getForShare(trx, scope, planId);
      if (!plan) throw new NotFoundError(`Plan ${planId} not found`, { field: 'plan_id', plan_id: planId });
      if (plan.status === 'archived') throw new ValidationError(`Plan ${planId} is archived`, { field: 'plan_id', plan_id: planId });
      const price = priceOf(scope, planId, input, this.deps.clock());
      await this.deps.prices.insert(trx, [price]);
      return price;
    });
  }

  async get(scope: Scope, id: string): Promise<Price> {
    const price = await this.deps.prices.get(this.deps.db, scope, id);
    if (!price) throw priceNotFound(id);
    return price;
  }

  /** Archives the price: subscriptions that bill it keep billing it. */
  async archive(scope: Scope, id: string): Promise<void> {
    if (!(await this.deps.prices.archive(this.deps.db, scope, id, this.deps.clock()))) throw priceNotFound(id);
  }
}
