import type { Conn } from '@billstream/db';

/**
 * Which keys a caller manages: those of its own environment, or with `api_keys:tenant` (in `*`)
 * those of every environment of its tenant (`environmentId` undefined).
 */
export interface KeyScope {
  tenantId: string;
  environmentId?: string;
}

export interface ApiKeyRecord {
  id: string;
  tenantId: string;
  environmentId: string;
  name: string;
  keyHash: string;
  keyPrefix: string;
  permissions: string[];
  createdBy: string;
  createdAt: Date;
  revokedAt: Date | null;
}

interface ApiKeyRow {
  id: string;
  tenant_id: string;
  environment_id: string;
  name: string;
  key_hash: string;
  key_prefix: string;
  permissions: string[] | string;
  created_by: string;
  created_at: Date;
  revoked_at: Date | null;
}

function fromRow(row: ApiKeyRow): ApiKeyRecord {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    environmentId: row.environment_id,
    name: row.name,
    keyHash: row.key_hash,
    keyPrefix: row.key_prefix,
    permissions: typeof row.permissions === 'string' ? JSON.parse(row.permissions) : row.permissions,
    createdBy: row.created_by,
    createdAt: new Date(row.created_at),
    revokedAt: row.revoked_at ? new Date(row.revoked_at) : null,
  };
}

/** The rows of a scope: its tenant's, and of one environment when it names one. */
function scoped(conn: Conn, scope: KeyScope) {
  const query = conn<ApiKeyRow>('api_keys').where({ tenant_id: scope.tenantId });
  return scope.environmentId === undefined ? query : query.where({ environment_id: scope.environmentId });
}

/**
 * Rows of `gateway.api_keys` <-> ApiKeyRecord. Stateless: every method takes the connection
 * first. A key is managed within a KeyScope: its environment, or its whole tenant;
 * `findByHash` is the authentication lookup, before any scope is known.
 */
export class ApiKeyStore {
  async insert(conn: Conn, record: Omit<ApiKeyRecord, 'createdAt' | 'revokedAt'>): Promise<ApiKeyRecord> {
    const [row] = await conn<ApiKeyRow>('api_keys')
      .insert({
        id: record.id,
        tenant_id: record.tenantId,
        environment_id: record.environmentId,
        name: record.name,
        key_hash: record.keyHash,
        key_prefix: record.keyPrefix,
        permissions: JSON.stringify(record.permissions),
        created_by: record.createdBy,
      })
      .returning('*');
    return fromRow(row as ApiKeyRow);
  }

  async findByHash(conn: Conn, keyHash: string): Promise<ApiKeyRecord | undefined> {
    const row = await conn<ApiKeyRow>('api_keys').where({ key_hash: keyHash }).first();
    return row ? fromRow(row) : undefined;
  }

  async list(conn: Conn, scope: KeyScope, limit: number, offset: number): Promise<{ items: ApiKeyRecord[]; total: number }> {
    const [rows, countRow] = await Promise.all([
      scoped(conn, scope)
        .orderBy([
          { column: 'created_at', order: 'desc' },
          { column: 'id', order: 'desc' },
        ])
        .limit(limit)
        .offset(offset),
      scoped(conn, scope).count<{ count: number | string }[]>({ count: '*' }),
    ]);
    return { items: rows.map(fromRow), total: Number(countRow[0].count) };
  }

  async get(conn: Conn, scope: KeyScope, id: string): Promise<ApiKeyRecord | undefined> {
    const row = await scoped(conn, scope).where({ id }).first();
    return row ? fromRow(row) : undefined;
  }

  /** Lifts a key's revocation and sets its permissions (the bootstrap and development keys at start). */
  async restore(conn: Conn, id: string, permissions: string[]): Promise<ApiKeyRecord | undefined> {
    const [row] = await conn<ApiKeyRow>('api_keys')
      .where({ id })
      .update({ revoked_at: null, permissions: JSON.stringify(permissions) as unknown as string[] })
      .returning('*');
    return row ? fromRow(row as ApiKeyRow) : undefined;
  }

  /** Marks a key revoked; returns it, or undefined when the scope has no such key. */
  async revoke(conn: Conn, scope: KeyScope, id: string): Promise<ApiKeyRecord | undefined> {
    const [row] = await scoped(conn, scope)
      .where({ id })
      .update({ revoked_at: conn.fn.now() as unknown as Date })
      .returning('*');
    return row ? fromRow(row as ApiKeyRow) : undefined;
  }
}
