import type { AggregationType, Scope } from '@billstream/contracts';
import type { Db, Trx } from '@billstream/db';
import { ROLLUP_SERIES_OF_VALUES } from './rollup-sql';

export interface MeterFilter {
  key: string;
  values: string[];
}

export interface Meter {
  id: string;
  tenantId: string;
  environmentId: string;
  name: string;
  eventName: string;
  aggregationType: AggregationType;
  aggregationField: string | null;
  filters: MeterFilter[];
  createdAt: Date;
  updatedAt: Date;
  /** When its usage rollup was built from the events stored before it; null until then (usage reads the events). */
  rollupReadyAt: Date | null;
  /** Its rollup series (ROLLUP_SERIES), set by the store on insert; meters of one definition share it. */
  rollupSeries: string;
}

interface MeterRow {
  id: string;
  tenant_id: string;
  environment_id: string;
  name: string;
  event_name: string;
  aggregation_type: string;
  aggregation_field: string | null;
  filters: MeterFilter[];
  created_at: Date;
  updated_at: Date;
  rollup_ready_at: Date | null;
  rollup_series: string;
}

function toMeter(row: MeterRow): Meter {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    environmentId: row.environment_id,
    name: row.name,
    eventName: row.event_name,
    aggregationType: row.aggregation_type as AggregationType,
    aggregationField: row.aggregation_field,
    filters: row.filters,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
    rollupReadyAt: row.rollup_ready_at ? new Date(row.rollup_ready_at) : null,
    rollupSeries: row.rollup_series,
  };
}

function toRow(m: Meter): Omit<MeterRow, 'rollup_series'> {
  return {
    id: m.id,
    tenant_id: m.tenantId,
    environment_id: m.environmentId,
    name: m.name,
    event_name: m.eventName,
    aggregation_type: m.aggregationType,
    aggregation_field: m.aggregationField,
    filters: m.filters,
    created_at: m.createdAt,
    updated_at: m.updatedAt,
    rollup_ready_at: m.rollupReadyAt,
  };
}

/** Meters of every scope; holds no connection (each call is given one). */
export class MeterStore {
  /** Inserts a meter (it carries its own tenant and environment) and sets its `rollupSeries`. */
  async insert(conn: Db | Trx, meter: Meter): Promise<void> {
    const row = toRow(meter);
    const rows = (await conn('meters')
      .insert({
        ...row,
        filters: JSON.stringify(row.filters),
        rollup_series: conn.raw(ROLLUP_SERIES_OF_VALUES, [row.tenant_id, row.environment_id, row.event_name, row.aggregation_field, JSON.stringify(row.filters)]),
      })
      .returning('rollup_series')) as Array<{ rollup_series: string }>;
    meter.rollupSeries = rows[0].rollup_series;
  }

  async get(conn: Db | Trx, scope: Scope, id: string): Promise<Meter | undefined> {
    const row = await conn('meters').where({ tenant_id: scope.tenantId, environment_id: scope.environmentId, id }).first<MeterRow | undefined>();
    return row ? toMeter(row) : undefined;
  }

  /** The meters of `ids` found in the scope, by id, in one read (ids of other scopes are not found). */
  async getMany(conn: Db | Trx, scope: Scope, ids: readonly string[]): Promise<Map<string, Meter>> {
    const rows = (await conn('meters')
      .where({ tenant_id: scope.tenantId, environment_id: scope.environmentId })
      .whereIn('id', [...new Set(ids)])) as MeterRow[];
    return new Map(rows.map((r) => [r.id, toMeter(r)]));
  }

  /** Ids of the meters, of every scope, whose rollup is not built yet, oldest first. */
  async rollupsPending(conn: Db | Trx): Promise<string[]> {
    const rows = (await conn('meters').whereNull('rollup_ready_at').orderBy([{ column: 'created_at' }, { column: 'id' }]).select('id')) as Array<{ id: string }>;
    return rows.map((r) => r.id);
  }

  /** Any scope's meter by id (ids are unique across scopes). */
  async byId(conn: Db | Trx, id: string): Promise<Meter | undefined> {
    const row = await conn('meters').where({ id }).first<MeterRow | undefined>();
    return row ? toMeter(row) : undefined;
  }

  /**
   * True when a ready meter of the same rollup series needs the same rows (digests for
   * UNIQUE_COUNT, partials for the others): the series is complete for this meter too, as every
   * batch since that meter's build has written them.
   */
  async seriesReadyFor(conn: Db | Trx, meter: Meter): Promise<boolean> {
    const unique = meter.aggregationType === 'UNIQUE_COUNT';
    const row = await conn('meters')
      .where({ rollup_series: meter.rollupSeries })
      .whereNotNull('rollup_ready_at')
      .andWhereRaw("(aggregation_type = 'UNIQUE_COUNT') = ?", [unique])
      .first('id');
    return row !== undefined;
  }

  async markRollupReady(conn: Db | Trx, id: string): Promise<void> {
    await conn('meters').where({ id }).update({ rollup_ready_at: conn.fn.now() });
  }

  async list(conn: Db | Trx, scope: Scope, limit: number, offset: number): Promise<{ items: Meter[]; total: number }> {
    const where = { tenant_id: scope.tenantId, environment_id: scope.environmentId };
    const [rows, count] = await Promise.all([
      conn('meters').where(where).orderBy([{ column: 'created_at' }, { column: 'id' }]).limit(limit).offset(offset),
      conn('meters').where(where).count<{ count: number }[]>({ count: '*' }),
    ]);
    return { items: (rows as MeterRow[]).map(toMeter), total: Number(count[0]?.count ?? 0) };
  }
}
