import type { Scope } from '@billstream/contracts';
import type { Conn } from '@billstream/db';

export interface WebhookEndpoint {
  id: string;
  tenantId: string;
  environmentId: string;
  url: string;
  events: string[];
  enabled: boolean;
  description: string | null;
  secret: string;
  version: number;
  createdAt: Date;
  updatedAt: Date;
}

export interface EndpointChanges {
  url?: string;
  events?: string[];
  enabled?: boolean;
  description?: string | null;
}

interface EndpointRow {
  id: string;
  tenant_id: string;
  environment_id: string;
  url: string;
  events: string[] | string;
  enabled: boolean;
  description: string | null;
  secret: string;
  version: number;
  created_at: Date | string;
  updated_at: Date | string;
}

function fromRow(row: EndpointRow): WebhookEndpoint {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    environmentId: row.environment_id,
    url: row.url,
    events: typeof row.events === 'string' ? JSON.parse(row.events) : row.events,
    enabled: row.enabled,
    description: row.description,
    secret: row.secret,
    version: row.version,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}

/**
 * Webhook endpoints, always read and written inside one tenant and environment. Stateless:
 * every method takes the connection (pool or transaction) first, then the scope.
 */
export class EndpointStore {
  private scoped(conn: Conn, scope: Scope) {
    return conn<EndpointRow>('endpoints').where({ tenant_id: scope.tenantId, environment_id: scope.environmentId });
  }

  async insert(conn: Conn, e: Omit<WebhookEndpoint, 'version' | 'createdAt' | 'updatedAt'>): Promise<WebhookEndpoint> {
    const [row] = await conn<EndpointRow>('endpoints')
      .insert({
        id: e.id,
        tenant_id: e.tenantId,
        environment_id: e.environmentId,
        url: e.url,
        events: JSON.stringify(e.events),
        enabled: e.enabled,
        description: e.description,
        secret: e.secret,
      })
      .returning('*');
    return fromRow(row as EndpointRow);
  }

  async find(conn: Conn, scope: Scope, id: string, forUpdate = false): Promise<WebhookEndpoint | undefined> {
    const query = this.scoped(conn, scope).where({ id });
    const row = await (forUpdate ? query.forUpdate() : query).first();
    return row ? fromRow(row as EndpointRow) : undefined;
  }

  async list(
    conn: Conn,
    scope: Scope,
    filter: { enabled?: boolean },
    limit: number,
    offset: number,
  ): Promise<{ items: WebhookEndpoint[]; total: number }> {
    const base = () => {
      const q = this.scoped(conn, scope);
      return filter.enabled === undefined ? q : q.where({ enabled: filter.enabled });
    };
    const [rows, [{ count }]] = await Promise.all([
      base().orderBy([{ column: 'created_at' }, { column: 'id' }]).limit(limit).offset(offset).select('*'),
      base().count<{ count: number | string }[]>({ count: '*' }),
    ]);
    return { items: (rows as EndpointRow[]).map(fromRow), total: Number(count) };
  }

  async update(conn: Conn, scope: Scope, id: string, changes: EndpointChanges): Promise<WebhookEndpoint> {
    const patch: Record<string, unknown> = {};
    if (changes.url !== undefined) patch.url = changes.url;
    if (changes.events !== undefined) patch.events = JSON.stringify(changes.events);
    if (changes.enabled !== undefined) patch.enabled = changes.enabled;
    if (changes.description !== undefined) patch.description = changes.description;
    const [row] = await this.scoped(conn, scope)
      .where({ id })
      .update({ ...patch, version: conn.raw('version + 1'), updated_at: conn.fn.now() })
      .returning('*');
    return fromRow(row as EndpointRow);
  }

  /** Deletes the endpoint with its tasks and delivery records. */
  async delete(conn: Conn, scope: Scope, id: string): Promise<boolean> {
    if ((await this.scoped(conn, scope).where({ id }).delete()) === 0) return false;
    await conn('tasks').where({ endpoint_id: id }).delete();
    await conn('deliveries').where({ endpoint_id: id }).delete();
    return true;
  }
}
