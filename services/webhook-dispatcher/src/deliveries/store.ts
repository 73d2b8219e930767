import type { Conn } from '@billstream/db';

export type DeliveryStatus = 'succeeded' | 'failed';

/** One attempt to deliver one envelope to one endpoint. */
export interface DeliveryRecord {
  id: string;
  endpointId: string;
  eventId: string;
  eventName: string;
  attempt: number;
  status: DeliveryStatus;
  responseCode: number | null;
  error: string | null;
  durationMs: number;
  attemptedAt: Date;
  retryAt: Date | null;
}

interface DeliveryRow {
  id: string;
  endpoint_id: string;
  event_id: string;
  event_name: string;
  attempt: number;
  status: DeliveryStatus;
  response_code: number | null;
  error: string | null;
  duration_ms: number;
  attempted_at: Date | string;
  retry_at: Date | string | null;
}

function fromRow(row: DeliveryRow): DeliveryRecord {
  return {
    id: row.id,
    endpointId: row.endpoint_id,
    eventId: row.event_id,
    eventName: row.event_name,
    attempt: row.attempt,
    status: row.status,
    responseCode: row.response_code,
    error: row.error,
    durationMs: row.duration_ms,
    attemptedAt: new Date(row.attempted_at),
    retryAt: row.retry_at ? new Date(row.retry_at) : null,
  };
}

function toRow(r: DeliveryRecord): DeliveryRow {
  return {
    id: r.id,
    endpoint_id: r.endpointId,
    event_id: r.eventId,
    event_name: r.eventName,
    attempt: r.attempt,
    status: r.status,
    response_code: r.responseCode,
    error: r.error,
    duration_ms: r.durationMs,
    attempted_at: r.attemptedAt,
    retry_at: r.retryAt,
  };
}

export interface DeliveryFilter {
  status?: DeliveryStatus;
  eventId?: string;
}

/** Delivery records (attempts). Stateless: every method takes the connection first. */
export class DeliveryStore {
  /** One attempt of an endpoint, or undefined. */
  async get(conn: Conn, endpointId: string, id: string): Promise<DeliveryRecord | undefined> {
    const row = await conn<DeliveryRow>('deliveries').where({ endpoint_id: endpointId, id }).first();
    return row ? fromRow(row as DeliveryRow) : undefined;
  }

  /** The highest attempt number recorded for an event at an endpoint (0 when none is left). */
  async lastAttempt(conn: Conn, endpointId: string, eventId: string): Promise<number> {
    const row = await conn('deliveries').where({ endpoint_id: endpointId, event_id: eventId }).max<{ max: number | null }>({ max: 'attempt' }).first();
    return Number(row?.max ?? 0);
  }

  /** The exact bytes of an event's envelope, while the retention keeps them, in the caller's scope. */
  async envelope(conn: Conn, eventId: string, tenantId: string, environmentId: string): Promise<string | undefined> {
    const row = (await conn('messages').where({ id: eventId, tenant_id: tenantId, environment_id: environmentId }).first('body')) as { body: string } | undefined;
    return row?.body;
  }

  async insert(conn: Conn, records: DeliveryRecord[]): Promise<void> {
    if (records.length === 0) return;
    await conn<DeliveryRow>('deliveries').insert(records.map(toRow));
  }

  /** Failed attempts since `since` in a scope: their count, and the `top` endpoints with the most (by count, then latest). */
  async failures(conn: Conn, tenantId: string, environmentId: string, since: Date, top: number) {
    const rows = (await conn('deliveries as d')
      .join('endpoints as e', 'e.id', 'd.endpoint_id')
      .where({ 'e.tenant_id': tenantId, 'e.environment_id': environmentId, 'd.status': 'failed' })
      .where('d.attempted_at', '>=', since)
      .groupBy('e.id', 'e.url')
      .select('e.id as endpoint_id', 'e.url')
      .count({ failed: '*' })
      .max({ last: 'd.attempted_at' })
      .orderBy([
        { column: 'failed', order: 'desc' },
        { column: 'last', order: 'desc' },
      ])) as Array<{ endpoint_id: string; url: string; failed: number | string; last: Date | string }>;
    const endpoints = await Promise.all(
      rows.slice(0, top).map(async (r) => {
        const latest = (await conn('deliveries').where({ endpoint_id: r.endpoint_id, status: 'failed' }).where('attempted_at', '>=', since).orderBy([{ column: 'attempted_at', order: 'desc' }, { column: 'id', order: 'desc' }]).first('error')) as { error: string | null } | undefined;
        return { endpointId: r.endpoint_id, url: r.url, failed: Number(r.failed), lastFailedAt: new Date(r.last), lastError: latest?.error ?? null };
      }),
    );
    return { failed: rows.reduce((n, r) => n + Number(r.failed), 0), endpoints };
  }

  /** An endpoint's attempts, newest first (ties broken by id). */
  async list(
    conn: Conn,
    endpointId: string,
    filter: DeliveryFilter,
    limit: number,
    offset: number,
  ): Promise<{ items: DeliveryRecord[]; total: number }> {
    const base = () => {
      const q = conn<DeliveryRow>('deliveries').where({ endpoint_id: endpointId });
      if (filter.status) q.where({ status: filter.status });
      if (filter.eventId) q.where({ event_id: filter.eventId });
      return q;
    };
    const [rows, [{ count }]] = await Promise.all([
      base()
        .orderBy([
          { column: 'attempted_at', order: 'desc' },
          { column: 'id', order: 'desc' },
        ])
        .limit(limit)
        .offset(offset)
        .select('*'),
      base().count<{ count: number | string }[]>({ count: '*' }),
    ]);
    return { items: (rows as DeliveryRow[]).map(fromRow), total: Number(count) };
  }
}
