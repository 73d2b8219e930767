import type { Conn } from '@billstream/db';

/** A portal session (ADR 0069): who opened it for which customer, until when; its token only as a hash. */
export interface PortalSessionRecord {
  id: string;
  tenantId: string;
  environmentId: string;
  customerId: string;
  tokenHash: string;
  returnUrl: string | null;
  /** The https origins that may frame this session's page (the tenant's setting when it was opened). */
  frameAncestors: string[];
  createdBy: string;
  createdAt: Date;
  expiresAt: Date;
  revokedAt: Date | null;
}

interface PortalSessionRow {
  id: string;
  tenant_id: string;
  environment_id: string;
  customer_id: string;
  token_hash: string;
  return_url: string | null;
  frame_ancestors: string[] | null;
  created_by: string;
  created_at: Date;
  expires_at: Date;
  revoked_at: Date | null;
}

function fromRow(row: PortalSessionRow): PortalSessionRecord {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    environmentId: row.environment_id,
    customerId: row.customer_id,
    tokenHash: row.token_hash,
    returnUrl: row.return_url,
    frameAncestors: row.frame_ancestors ?? [],
    createdBy: row.created_by,
    createdAt: new Date(row.created_at),
    expiresAt: new Date(row.expires_at),
    revokedAt: row.revoked_at ? new Date(row.revoked_at) : null,
  };
}

/** Rows of `gateway.portal_sessions` <-> PortalSessionRecord; stateless, the connection first. */
export class PortalSessionStore {
  async insert(conn: Conn, record: Omit<PortalSessionRecord, 'createdAt' | 'revokedAt'>): Promise<PortalSessionRecord> {
    const [row] = await conn<PortalSessionRow>('portal_sessions')
      .insert({
        id: record.id,
        tenant_id: record.tenantId,
        environment_id: record.environmentId,
        customer_id: record.customerId,
        token_hash: record.tokenHash,
        return_url: record.returnUrl,
        frame_ancestors: JSON.stringify(record.frameAncestors) as unknown as string[],
        created_by: record.createdBy,
        expires_at: record.expiresAt,
      })
      .returning('*');
    return fromRow(row as PortalSessionRow);
  }

  async findByHash(conn: Conn, tokenHash: string): Promise<PortalSessionRecord | undefined> {
    const row = await conn<PortalSessionRow>('portal_sessions').where({ token_hash: tokenHash }).first();
    return row ? fromRow(row) : undefined;
  }

  async findById(conn: Conn, id: string): Promise<PortalSessionRecord | undefined> {
    const row = await conn<PortalSessionRow>('portal_sessions').where({ id }).first();
    return row ? fromRow(row) : undefined;
  }

  /** Marks a session of the tenant and environment revoked (once); undefined when there is no such session. */
  async revoke(conn: Conn, scope: { tenantId: string; environmentId: string }, id: string): Promise<PortalSessionRecord | undefined> {
    const [row] = await conn<PortalSessionRow>('portal_sessions')
      .where({ id, tenant_id: scope.tenantId, environment_id: scope.environmentId })
      .update({ revoked_at: conn.raw('coalesce(revoked_at, now())') as unknown as Date })
      .returning('*');
    return row ? fromRow(row as PortalSessionRow) : undefined;
  }
}
