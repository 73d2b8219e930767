import type { Scope } from '@billstream/contracts';
import { pageOf, type Conn, type Trx } from '@billstream/db';
import type { Feature, FeatureChanges, FeatureListQuery } from './domain';

interface FeatureRow {
  id: string;
  tenant_id: string;
  environment_id: string;
  name: string;
  lookup_key: string;
  type: Feature['type'];
  meter_id: string | null;
  description: string | null;
  metadata: Record<string, string>;
  status: Feature['status'];
  version: number;
  created_at: Date;
  updated_at: Date;
}

function fromRow(r: FeatureRow): Feature {
  return {
    id: r.id,
    tenantId: r.tenant_id,
    environmentId: r.environment_id,
    name: r.name,
    lookupKey: r.lookup_key,
    type: r.type,
    meterId: r.meter_id,
    description: r.description,
    metadata: r.metadata,
    status: r.status,
    version: r.version,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

const scoped = (conn: Conn, scope: Scope) =>
  conn<FeatureRow>('features').where({ tenant_id: scope.tenantId, environment_id: scope.environmentId });

export class FeatureStore {
  async insert(conn: Conn, f: Feature): Promise<void> {
    await conn('features').insert({
      id: f.id,
      tenant_id: f.tenantId,
      environment_id: f.environmentId,
      name: f.name,
      lookup_key: f.lookupKey,
      type: f.type,
      meter_id: f.meterId,
      description: f.description,
      metadata: JSON.stringify(f.metadata),
      status: f.status,
      version: f.version,
      created_at: f.createdAt,
      updated_at: f.updatedAt,
    });
  }

  async get(conn: Conn, scope: Scope, id: string): Promise<Feature | undefined> {
    const row = await scoped(conn, scope).where({ id }).first();
    return row && fromRow(row);
  }

  /** The feature, locked until the transaction ends (an update checks its version first). */
  async getForUpdate(trx: Trx, scope: Scope, id: string): Promise<Feature | undefined> {
    const row = await scoped(trx, scope).where({ id }).forUpdate().first();
    return row && fromRow(row);
  }

  /** Locks the feature until the transaction ends: it cannot be archived under a new entitlement. */
  async getForShare(trx: Trx, scope: Scope, id: string): Promise<Feature | undefined> {
    const row = await scoped(trx, scope).where({ id }).forShare().first();
    return row && fromRow(row);
  }

  async getByLookupKey(conn: Conn, scope: Scope, lookupKey: string): Promise<Feature | undefined> {
    const row = await scoped(conn, scope).where({ lookup_key: lookupKey }).first();
    return row && fromRow(row);
  }

  async getMany(conn: Conn, scope: Scope, ids: string[]): Promise<Feature[]> {
    if (ids.length === 0) return [];
    return (await scoped(conn, scope).whereIn('id', ids)).map(fromRow);
  }

  async list(conn: Conn, scope: Scope, q: FeatureListQuery): Promise<{ items: Feature[]; total: number }> {
    const filtered = () => {
      const b = scoped(conn, scope);
      if (q.status) b.where({ status: q.status });
      if (q.type) b.where({ type: q.type });
      if (q.lookupKey) b.where({ lookup_key: q.lookupKey });
      return b;
    };
    return pageOf(filtered, q, fromRow);
  }

  async update(conn: Conn, scope: Scope, id: string, changes: FeatureChanges & { status?: Feature['status'] }, at: Date): Promise<Feature | undefined> {
    const set: Record<string, unknown> = { updated_at: at, version: conn.raw('version + 1') };
    if (changes.name !== undefined) set.name = changes.name;
    if (changes.description !== undefined) set.description = changes.description;
    if (changes.metadata !== undefined) set.metadata = JSON.stringify(changes.metadata);
    if (changes.status !== undefined) set.status = changes.status;
    const rows = await scoped(conn, scope).where({ id }).update(set).returning('*');
    return rows[0] && fromRow(rows[0] as FeatureRow);
  }
}
