import type { Scope } from '@billstream/contracts';
import type { Db, Trx } from '@billstream/db';
import { rowsOf } from '@billstream/db';
import { scopeLockKey, PROJECTION_LOCK } from '../customers/lock';
import { eventScopeSql } from './event-key';
import { meteredSql, ROLLUP_CTES } from '../meters/rollup-sql';

/** A stored usage event, as the service speaks of it. */
export interface StoredEvent {
  eventId: string;
  eventName: string;
  externalCustomerId: string;
  customerId: string | null;
  timestamp: string;
  properties: Record<string, unknown>;
  source: string | null;
}

export interface EventFilter {
  externalCustomerId?: string;
  eventName?: string;
  /** Inclusive lower bound of event time. */
  from?: string;
  /** Exclusive upper bound of event time. */
  to?: string;
}

export interface StoreResult {
  received: number;
  stored: number;
}

interface EventRow {
  event_id: string;
  event_name: string;
  external_customer_id: string;
  customer_id: string | null;
  timestamp: string;
  properties: Record<string, unknown>;
  source: string | null;
}

function toEvent(row: EventRow): StoredEvent {
  return {
    eventId: row.event_id,
    eventName: row.event_name,
    externalCustomerId: row.external_customer_id,
    customerId: row.customer_id,
    timestamp: row.timestamp,
    properties: row.properties,
    source: row.source,
  };
}

/** UTC ISO 8601 with microseconds, as every event timestamp is shown. */
export const ISO_MICROS = `to_char("timestamp" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/**
 * One statement stores a batch: the first copy of each dedup key (ADR 0053: the scope hashed from
 * tenant and environment, and event_id) claims it, only claimed events are inserted (customer id
 * resolved from the projection), and the per-scope counters (total and per hour of receipt) grow
 * by what was inserted. Keys and counter rows are taken in sorted order, so concurrent batches
 * sharing keys or scopes wait, never deadlock.
 */
const STORE_BATCH = `
WITH input AS (
  SELECT DISTINCT ON (t.scope, t.event_id) t.*
  FROM (
    SELECT r.*, ${eventScopeSql('r.tenant_id', 'r.environment_id')} AS scope
    FROM ROWS FROM (json_to_recordset(?::json) AS (
      tenant_id text, environment_id text, event_id text, event_name text, external_customer_id text,
      timestamp timestamptz, properties jsonb, source text, received_at timestamptz
    )) WITH ORDINALITY AS r(tenant_id, environment_id, event_id, event_name, external_customer_id,
      timestamp, properties, source, received_at, ord)
  ) t
  ORDER BY t.scope, t.event_id, t.ord
),
claimed AS (
  INSERT INTO event_keys (scope, event_id)
  SELECT scope, event_id FROM input
  ON CONFLICT DO NOTHING
  RETURNING scope, event_id
),
stored AS (
  INSERT INTO events (tenant_id, environment_id, event_id, event_name, external_customer_id, customer_id,
    timestamp, properties, source, received_at)
  SELECT i.tenant_id, i.environment_id, i.event_id, i.event_name, i.external_customer_id,
    (SELECT c.customer_id FROM customers c
      WHERE c.tenant_id = i.tenant_id AND c.environment_id = i.environment_id
        AND c.external_id = i.external_customer_id AND c.deleted_at IS NULL
      ORDER BY c.updated_at DESC LIMIT 1),
    i.timestamp, i.properties, i.source, i.received_at
  FROM input i JOIN claimed k USING (scope, event_id)
  RETURNING tenant_id, environment_id, received_at, event_id, event_name, external_customer_id, "timestamp", properties
),
counted AS (
  INSERT INTO event_stats AS s (tenant_id, environment_id, total_events, last_event_at)
  SELECT tenant_id, environment_id, count(*), max(received_at) FROM stored GROUP BY tenant_id, environment_id
  ORDER BY tenant_id, environment_id
  ON CONFLICT (tenant_id, environment_id) DO UPDATE
    SET total_events = s.total_events + excluded.total_events,
        last_event_at = greatest(s.last_event_at, excluded.last_event_at)
  RETURNING s.tenant_id
),
hourly AS (
  INSERT INTO event_hours AS h (tenant_id, environment_id, hour, events)
  SELECT tenant_id, environment_id, date_trunc('hour', received_at, 'UTC'), count(*) FROM stored GROUP BY 1, 2, 3
  ORDER BY 1, 2, 3
  ON CONFLICT (tenant_id, environment_id, hour) DO UPDATE SET events = h.events + excluded.events
  RETURNING h.tenant_id
),
metered AS (${meteredSql('stored', 'true', 'true')}
),${ROLLUP_CTES}
SELECT (SELECT count(*) FROM stored)::int AS stored`;

/** The stored usage events of every scope; holds no connection (each call is given one). */
export class EventStore {
  /**
   * Stores a batch of usage-events message values (JSON objects) in one transaction (a
   * savepoint when `conn` is a transaction). Scopes (`tenant:environment`) are share-locked so
   * that a concurrent customer projection change waits for it (and so fills in the customer id
   * of every event committed before it).
   */
  async storeBatch(conn: Db | Trx, values: string[], scopes: string[]): Promise<StoreResult> {
    if (values.length === 0) return { received: 0, stored: 0 };
    return conn.transaction(async (trx: Trx) => {
      await trx.raw(
        'SELECT pg_advisory_xact_lock_shared(?, k) FROM (SELECT DISTINCT unnest(?::int[]) AS k ORDER BY 1) s',
        [PROJECTION_LOCK, [...new Set(scopes.map(scopeLockKey))]],
      );
      const rows = rowsOf<{ stored: number }>(await trx.raw(STORE_BATCH, [`[${values.join(',')}]`]));
      return { received: values.length, stored: rows[0]?.stored ?? 0 };
    });
  }

  /**
   * A page of events, newest first (ties by event id), and the size of the filtered set, read
   * in one snapshot (a read-only repeatable-read transaction): events stored in between never
   * make the page and total_count disagree.
   */
  async query(conn: Db, scope: Scope, filter: EventFilter, limit: number, offset: number): Promise<{ events: StoredEvent[]; total: number }> {
    return conn.transaction(async (trx: Trx) => queryIn(trx, scope, filter, limit, offset), {
      isolationLevel: 'repeatable read',
      readOnly: true,
    });
  }

  /**
   * One page of an export, oldest first by (timestamp, event_id), strictly after `after`
   * (keyset: each page is an index range scan, whatever the page number).
   */
  async exportPage(
    conn: Db,
    scope: Scope,
    filter: EventFilter,
    after: { timestamp: string; eventId: string } | null,
    limit: number,
  ): Promise<StoredEvent[]> {
    return conn.transaction(
      async (trx: Trx) => {
        const q = filtered(trx, scope, filter);
        if (after) q.andWhereRaw('("timestamp", event_id) > (?::timestamptz, ?)', [after.timestamp, after.eventId]);
        const rows = await q
          .select('event_id', 'event_name', 'external_customer_id', 'customer_id', trx.raw(`${ISO_MICROS} AS timestamp`), 'properties', 'source')
          .orderBy([
            { column: 'events.timestamp', order: 'asc' },
            { column: 'event_id', order: 'asc' },
          ])
          .limit(limit);
        return (rows as EventRow[]).map(toEvent);
      },
      { readOnly: true },
    );
  }

  /** Stored events per UTC hour of receipt since `since` (hours with none have no row), oldest first. */
  async hourly(conn: Db, scope: Scope, since: Date): Promise<Array<{ hour: Date; events: number }>> {
    const rows = await conn('event_hours')
      .where({ tenant_id: scope.tenantId, environment_id: scope.environmentId })
      .andWhere('hour', '>=', conn.raw("date_trunc('hour', ?::timestamptz, 'UTC')", [since.toISOString()]))
      .orderBy('hour')
      .select<Array<{ hour: Date; events: string | number }>>('hour', 'events');
    return rows.map((r) => ({ hour: new Date(r.hour), events: Number(r.events) }));
  }

  async stats(conn: Db | Trx, scope: Scope): Promise<{ totalEvents: number; lastEventAt: Date | null }> {
    const row = await conn('event_stats')
      .where({ tenant_id: scope.tenantId, environment_id: scope.environmentId })
      .first<{ total_events: number; last_event_at: Date } | undefined>('total_events', 'last_event_at');
    return { totalEvents: row?.total_events ?? 0, lastEventAt: row ? new Date(row.last_event_at) : null };
  }
}

function filtered(trx: Trx, scope: Scope, filter: EventFilter) {
  const q = trx('events').where({ tenant_id: scope.tenantId, environment_id: scope.environmentId });
  if (filter.externalCustomerId !== undefined) q.andWhere('external_customer_id', filter.externalCustomerId);
  if (filter.eventName !== undefined) q.andWhere('event_name', filter.eventName);
  if (filter.from !== undefined) q.andWhere('timestamp', '>=', filter.from);
  if (filter.to !== undefined) q.andWhere('timestamp', '<', filter.to);
  return q;
}

async function queryIn(trx: Trx, scope: Scope, filter: EventFilter, limit: number, offset: number): Promise<{ events: StoredEvent[]; total: number }> {
  const rows = await filtered(trx, scope, filter)
    .select('event_id', 'event_name', 'external_customer_id', 'customer_id', trx.raw(`${ISO_MICROS} AS timestamp`), 'properties', 'source')
    .orderBy([
      { column: 'events.timestamp', order: 'desc' },
      { column: 'event_id', order: 'desc' },
    ])
    .limit(limit)
    .offset(offset);
  const countRows = await filtered(trx, scope, filter).count<{ count: number }[]>({ count: '*' });
  return { events: (rows as EventRow[]).map(toEvent), total: Number(countRows[0]?.count ?? 0) };
}
