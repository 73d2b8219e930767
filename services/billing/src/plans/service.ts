import type { Scope } from '@billstream/contracts';
import type { Db } from '@billstream/db';
import { AlreadyExistsError, NotFoundError, PG_UNIQUE_VIOLATION, pgErrorCode } from '@billstream/errors';
import { assertIfMatch } from '@billstream/http';
import { newId } from '@billstream/ids';
import type { NewPrice, Price } from '../prices/domain';
import { priceOf, type MeterCheck } from '../prices/new-price';
import type { PriceStore } from '../prices/store';
import type { TaxRateRefs } from '../taxes/refs';
import type { Plan, PlanChanges, PlanListQuery, PlanWithPrices } from './domain';
import type { PlanStore } from './store';

export interface NewPlan {
  name: string;
  lookupKey: string | null;
  description: string | null;
  metadata: Record<string, string>;
  prices: NewPrice[];
  /** Absent: none. */
  taxRateIds?: string[];
}

export function planNotFound(id: string, field = 'id'): NotFoundError {
  return new NotFoundError(`Plan ${id} not found`, { field, plan_id: id });
}

export interface PlanServiceDeps {
  db: Db;
  plans: PlanStore;
  prices: PriceStore;
  meters: MeterCheck;
  taxRates: TaxRateRefs;
  clock: () => Date;
}

/** Plans and the prices created with them. */
export class PlanService {
  constructor(private readonly deps: PlanServiceDeps) {}

  /** The plan and its prices in one transaction, after every meter was found in the caller's tenant. */
  async create(scope: Scope, input: NewPlan, requestId: string): Promise<PlanWithPrices> {
    await this.deps.meters.ensureAll(
      scope,
      input.prices.map((p, i) => ({ meterId: p.meterId, field: `prices.${i}.meter_id` })),
      requestId,
    );
    await this.deps.taxRates.ensureActive(this.deps.db, scope, [
      { ids: input.taxRateIds ?? [], field: 'tax_rate_ids' },
      ...input.prices.map((p, i) => ({ ids: p.taxRateIds, field: `prices.${i}.tax_rate_ids` })),
    ]);
    const now = this.deps.clock();
    const plan: Plan = {
      id: newId('plan'),
      ...scope,
      name: input.name,
      lookupKey: input.lookupKey,
      description: input.description,
      metadata: input.metadata,
      status: 'active',
      taxRateIds: input.taxRateIds ?? [],
      version: 1,
      createdAt: now,
      updatedAt: now,
    };
    const prices: Price[] = input.prices.map((p) => priceOf(scope, plan.id, p, now));
    try {
      await this.deps.db.transaction(async (trx) => {
        await this.deps.plans.insert(trx, plan);
        await this.deps.prices.insert(trx, prices);
      });
    } catch (err) {
      if (pgErrorCode(err) === PG_UNIQUE_VIOLATION) {
        throw new AlreadyExistsError(`A plan with lookup_key "${plan.lookupKey}" already exists`, {
          field: 'lookup_key',
          lookup_key: plan.lookupKey,
        });
      }
      throw err;
    }
    return { ...plan, prices };
  }

  async get(scope: Scope, id: string): Promise<PlanWithPrices> {
    const plan = await this.deps.plans.get(this.deps.db, scope, id);
    if (!plan) throw planNotFound(id);
    const prices = await this.deps.prices.ofPlans(this.deps.db, scope, [id]);
    return { ...plan, prices: prices.get(id) ?? [] };
  }

  async list(scope: Scope, q: PlanListQuery): Promise<{ items: PlanWithPrices[]; total: number }> {
    const page = await this.deps.plans.list(this.deps.db, scope, q);
    const prices = await this.deps.prices.ofPlans(this.deps.db, scope, page.items.map((p) => p.id));
    return { items: page.items.map((p) => ({ ...p, prices: prices.get(p.id) ?? [] })), total: page.total };
  }

  /** `ifMatch` (the If-Match header) must name the current ETag, or be `*` or absent; else version_conflict and nothing changes. */
  async update(scope: Scope, id: string, changes: PlanChanges, ifMatch?: string): Promise<PlanWithPrices> {
    if (changes.taxRateIds) await this.deps.taxRates.ensureActive(this.deps.db, scope, [{ ids: changes.taxRateIds, field: 'tax_rate_ids' }]);
    await this.deps.db.transaction(async (trx) => {
      const current = await this.deps.plans.getForUpdate(trx, scope, id);
      if (!current) throw planNotFound(id);
      assertIfMatch(ifMatch, current.version, `Plan ${id}`);
      await this.deps.plans.update(trx, scope, id, changes, this.deps.clock());
    });
    return this.get(scope, id);
  }

  /** Archives the plan: new subscriptions to it are refused; running ones go on. */
  async archive(scope: Scope, id: string): Promise<void> {
    const archived = await this.deps.plans.update(this.deps.db, scope, id, { status: 'archived' }, this.deps.clock());
    if (!archived) throw planNotFound(id);
  }
}
