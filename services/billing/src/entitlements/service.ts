import type { Scope } from '@billstream/contracts';
import type { Db } from '@billstream/db';
import { AlreadyExistsError, NotFoundError, PG_UNIQUE_VIOLATION, ValidationError, pgErrorCode } from '@billstream/errors';
import { assertIfMatch } from '@billstream/http';
import { newId } from '@billstream/ids';
import type { EventContext } from '@billstream/outbox';
import { planNotFound } from '../plans/service';
import type { PlanStore } from '../plans/store';
import type { Entitlement, EntitlementListQuery, GrantInput } from './domain';
import type { EntitlementStore } from './store';
import { announceEntitlement } from './events';
import type { FeatureStore } from '../features/store';
import { featureNotFound } from '../features/service';
import { changedGrant, newGrant } from './grant';

type Ctx = EventContext & { requestId: string };

function entitlementNotFound(id: string): NotFoundError {
  return new NotFoundError(`Entitlement ${id} not found`, { field: 'id', entitlement_id: id });
}

export interface EntitlementServiceDeps {
  db: Db;
  plans: PlanStore;
  features: FeatureStore;
  entitlements: EntitlementStore;
  clock: () => Date;
  /** Nudges the outbox relay after a commit that wrote events. */
  published: () => void;
}

/** Entitlements: a plan grants a feature; each change announced through the outbox (the entitlements service's check hears it, ADR 0061). */
export class EntitlementService {
  private readonly db: Db;
  private readonly plans: PlanStore;
  private readonly features: FeatureStore;
  private readonly entitlements: EntitlementStore;
  private readonly clock: () => Date;
  private readonly published: () => void;

  constructor(deps: EntitlementServiceDeps) {
    ({ db: this.db, plans: this.plans, features: this.features, entitlements: this.entitlements, clock: this.clock, published: this.published } = deps);
  }

  async create(ctx: Ctx, planId: string, featureId: string, input: GrantInput): Promise<Entitlement> {
    try {
      const entitlement = await this.db.transaction(async (trx) => {
        const plan = await this.plans.getForShare(trx, ctx, planId);
        if (!plan) throw planNotFound(planId, 'plan_id');
        const feature = await this.features.getForShare(trx, ctx, featureId);
        if (!feature) throw featureNotFound(featureId, 'feature_id');
        if (feature.status === 'archived') {
          throw new ValidationError(`Feature ${featureId} is archived`, { field: 'feature_id', feature_id: featureId });
        }
        const now = this.clock();
        const e: Entitlement = {
          id: newId('entitlement'),
          tenantId: ctx.tenantId,
          environmentId: ctx.environmentId,
          planId,
          featureId,
          featureType: feature.type,
          ...newGrant(feature.type, input),
          version: 1,
          createdAt: now,
          updatedAt: now,
        };
        await this.entitlements.insert(trx, e);
        await announceEntitlement(trx, ctx, 'entitlement.created', e);
        return e;
      });
      this.published();
      return entitlement;
    } catch (err) {
      if (pgErrorCode(err) === PG_UNIQUE_VIOLATION) {
        throw new AlreadyExistsError(`Plan ${planId} already has an entitlement to feature ${featureId}`, { field: 'feature_id', plan_id: planId, feature_id: featureId });
      }
      throw err;
    }
  }

  async get(scope: Scope, id: string): Promise<Entitlement> {
    const e = await this.entitlements.get(this.db, scope, id);
    if (!e) throw entitlementNotFound(id);
    return e;
  }

  list(scope: Scope, q: EntitlementListQuery): Promise<{ items: Entitlement[]; total: number }> {
    return this.entitlements.list(this.db, scope, q);
  }

  /** `ifMatch` (the If-Match header) must name the current ETag, or be `*` or absent; else version_conflict and nothing changes. */
  async update(ctx: Ctx, id: string, input: GrantInput, ifMatch?: string): Promise<Entitlement> {
    const updated = await this.db.transaction(async (trx) => {
      const current = await this.entitlements.getForUpdate(trx, ctx, id);
      if (!current) throw entitlementNotFound(id);
      assertIfMatch(ifMatch, current.version, `Entitlement ${id}`);
      const e: Entitlement = { ...current, ...changedGrant(current.featureType, current, input), version: current.version + 1, updatedAt: this.clock() };
      await this.entitlements.save(trx, e);
      await announceEntitlement(trx, ctx, 'entitlement.updated', e);
      return e;
    });
    this.published();
    return updated;
  }

  /** Removes the entitlement: its plan stops granting the feature. */
  async delete(ctx: Ctx, id: string): Promise<void> {
    await this.db.transaction(async (trx) => {
      const current = await this.entitlements.getForUpdate(trx, ctx, id);
      if (!current) throw entitlementNotFound(id);
      await this.entitlements.delete(trx, id);
      await announceEntitlement(trx, ctx, 'entitlement.deleted', current);
    });
    this.published();
  }
}
