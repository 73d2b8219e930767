import { billingSnapshotInternalApi, entitlementsSnapshotResponse, snapshotEntitlementSchema, snapshotFeatureSchema, snapshotSubscriptionSchema, SNAPSHOT_KINDS, LINK_CONTEXT, type SnapshotKind } from '@billstream/contracts';
import type { Db } from '@billstream/db';
import { ServiceUnavailableError } from '@billstream/errors';
import { InternalClient } from '@billstream/http';
import { applyRecords, type ProjectionChanges } from './consumers';
import type { ProjectionStore } from './store';

export const SEED_SOURCE = 'billing';
const PAGE = 500;

const empty = { features: [], entitlements: [], subscriptions: [] };
const parse = (kind: SnapshotKind, item: unknown) =>
  kind === 'features' ? { ...empty, features: [snapshotFeatureSchema.parse(item)] } : kind === 'entitlements' ? { ...empty, entitlements: [snapshotEntitlementSchema.parse(item)] } : { ...empty, subscriptions: [snapshotSubscriptionSchema.parse(item)] };

export interface SnapshotSeederDeps {
  db: Db;
  store: ProjectionStore;
  /** Billing's base URL (its snapshot route). */
  billingUrl: () => string | undefined;
  internalToken: string;
  /** Default: the wall clock. */
  clock?: () => Date;
}

/**
 * Seeds the projection from billing's snapshot (ADR 0061): features, entitlements and granting
 * subscriptions, page by page, each page in one transaction. Every row is written only where
 * the projection holds an older version, so a seed run while billing-events are applied, or run
 * twice, ends where the events alone would: the two commute.
 */
export class SnapshotSeeder {
  private readonly client: InternalClient;
  private readonly db: Db;
  private readonly store: ProjectionStore;
  private readonly clock: () => Date;

  constructor(deps: SnapshotSeederDeps) {
    ({ db: this.db, store: this.store } = deps);
    this.clock = deps.clock ?? (() => new Date());
    this.client = new InternalClient({ service: 'billing', baseUrl: deps.billingUrl, internalToken: deps.internalToken, actor: 'entitlements', timeoutMs: 30_000 });
  }

  /** Whether the seed ran once already (a start seeds only when it did not). */
  async seeded(): Promise<boolean> {
    return (await this.db('projection_seeds').where({ source: SEED_SOURCE }).first()) !== undefined;
  }

  /** Reads the whole snapshot and applies it; answers the rows read and calls `changed` per page. */
  async seed(changed: (c: ProjectionChanges) => void = () => undefined): Promise<{ rows: number; written: number }> {
    let rows = 0;
    let written = 0;
    for (const kind of SNAPSHOT_KINDS) {
      let after: string | undefined;
      do {
        const query = new URLSearchParams({ kind, limit: String(PAGE), ...(after ? { after } : {}) });
        const { status, text } = await this.client.call(LINK_CONTEXT, 'GET', `${billingSnapshotInternalApi.entitlementsSnapshot.path}?${query}`, `seed-${kind}`);
        if (status !== 200) throw new ServiceUnavailableError('Billing could not give its entitlements snapshot; retry later', { upstream_status: status });
        const page = entitlementsSnapshotResponse.parse(JSON.parse(text));
        const records = page.items.map((item) => parse(kind, item));
        const merged = { features: records.flatMap((r) => r.features), entitlements: records.flatMap((r) => r.entitlements), subscriptions: records.flatMap((r) => r.subscriptions) };
        const changes = await this.db.transaction((trx) => applyRecords(trx, this.store, merged));
        changed(changes);
        rows += page.items.length;
        written += changes.scopes.length + changes.customers.length;
        after = page.next_after ?? undefined;
      } while (after);
    }
    await this.db('projection_seeds')
      .insert({ source: SEED_SOURCE, seeded_at: this.clock(), rows })
      .onConflict('source')
      .merge();
    return { rows, written };
  }

  close(): Promise<void> {
    return this.client.close();
  }
}
