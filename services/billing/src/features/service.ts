import type { FeatureType, Scope } from '@billstream/contracts';
import type { Db } from '@billstream/db';
import { AlreadyExistsError, NotFoundError, PG_UNIQUE_VIOLATION, pgErrorCode } from '@billstream/errors';
import { assertIfMatch } from '@billstream/http';
import { newId } from '@billstream/ids';
import type { EventContext } from '@billstream/outbox';
import type { MeterCheck } from '../prices/new-price';
import type { Feature, FeatureChanges, FeatureListQuery } from './domain';
import { announceFeature } from './events';
import type { FeatureStore } from './store';

export interface NewFeature {
  name: string;
  lookupKey: string;
  type: FeatureType;
  meterId: string | null;
  description: string | null;
  metadata: Record<string, string>;
}

type Ctx = EventContext & { requestId: string };

export function featureNotFound(id: string, field = 'id'): NotFoundError {
  return new NotFoundError(`Feature ${id} not found`, { field, feature_id: id });
}

export interface FeatureServiceDeps {
  db: Db;
  features: FeatureStore;
  /** A metered feature's meter must exist (the ingestion-aggregator's). */
  meters: MeterCheck;
  clock: () => Date;
  /** Nudges the outbox relay after a commit that wrote events. */
  published: () => void;
}

/** Features: created, read, renamed, archived; each change announced through the outbox (the entitlements service's check hears it, ADR 0061). */
export class FeatureService {
  private readonly db: Db;
  private readonly features: FeatureStore;
  private readonly meters: MeterCheck;
  private readonly clock: () => Date;
  private readonly published: () => void;

  constructor(deps: FeatureServiceDeps) {
    ({ db: this.db, features: this.features, meters: this.meters, clock: this.clock, published: this.published } = deps);
  }

  async create(ctx: Ctx, input: NewFeature): Promise<Feature> {
    await this.meters.ensureAll(ctx, [{ meterId: input.meterId, field: 'meter_id' }], ctx.requestId);
    const now = this.clock();
    const feature: Feature = { id: newId('feature'), tenantId: ctx.tenantId, environmentId: ctx.environmentId, ...input, status: 'active', version: 1, createdAt: now, updatedAt: now };
    try {
      await this.db.transaction(async (trx) => {
        await this.features.insert(trx, feature);
        await announceFeature(trx, ctx, 'feature.created', feature);
      });
    } catch (err) {
      if (pgErrorCode(err) === PG_UNIQUE_VIOLATION) {
        throw new AlreadyExistsError(`A feature with lookup_key "${input.lookupKey}" already exists`, { field: 'lookup_key', lookup_key: input.lookupKey });
      }
      throw err;
    }
    this.published();
    return feature;
  }

  async get(scope: Scope, id: string): Promise<Feature> {
    const feature = await this.features.get(this.db, scope, id);
    if (!feature) throw featureNotFound(id);
    return feature;
  }

  list(scope: Scope, q: FeatureListQuery): Promise<{ items: Feature[]; total: number }> {
    return this.features.list(this.db, scope, q);
  }

  /** `ifMatch` (the If-Match header) must name the current ETag, or be `*` or absent; else version_conflict and nothing changes. */
  async update(ctx: Ctx, id: string, changes: FeatureChanges, ifMatch?: string): Promise<Feature> {
    return this.change(ctx, id, changes, 'feature.updated', ifMatch);
  }

  /** Archives the feature: its entitlements stop granting it; a check of its lookup key gives 404. Archiving twice changes nothing. */
  async archive(ctx: Ctx, id: string): Promise<void> {
    const current = await this.get(ctx, id);
    if (current.status === 'archived') return;
    await this.change(ctx, id, { status: 'archived' }, 'feature.deleted');
  }

  private async change(ctx: Ctx, id: string, changes: FeatureChanges & { status?: 'archived' }, type: 'feature.updated' | 'feature.deleted', ifMatch?: string): Promise<Feature> {
    const feature = await this.db.transaction(async (trx) => {
      if (ifMatch !== undefined) {
        const current = await this.features.getForUpdate(trx, ctx, id);
        if (!current) throw featureNotFound(id);
        assertIfMatch(ifMatch, current.version, `Feature ${id}`);
      }
      const updated = await this.features.update(trx, ctx, id, changes, this.clock());
      if (!updated) throw featureNotFound(id);
      await announceFeature(trx, ctx, type, updated);
      return updated;
    });
    this.published();
    return feature;
  }
}
