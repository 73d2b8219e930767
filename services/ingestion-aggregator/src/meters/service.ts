import type { AggregationType, Scope, WindowSize } from '@billstream/contracts';
import type { Db } from '@billstream/db';
import { NotFoundError, ValidationError } from '@billstream/errors';
import { newId } from '@billstream/ids';
import { toDecimalString } from '@billstream/money';
import type { RollupBuilder } from './rollup-builder';
import { rollupCovers, type RollupUsageStore } from './rollup-usage-store';
import type { Meter, MeterFilter, MeterStore } from './store';
import type { UsageStore } from './usage-store';

export interface NewMeter {
  name: string;
  eventName: string;
  aggregationType: AggregationType;
  aggregationField?: string;
  filters: MeterFilter[];
}

export interface UsageRequest {
  externalCustomerId: string;
  from: string;
  to: string;
  windowSize?: WindowSize;
  extraFilters?: MeterFilter[];
}

export interface Usage {
  meterId: string;
  value: string;
  windows: Array<{ start: string; end: string; value: string }>;
}

/** One query of a usage batch: `usage` without windows, for any meter. */
export interface UsageBatchQuery extends Omit<UsageRequest, 'windowSize'> {
  meterId: string;
}

export interface UsageBatchValue {
  meterId: string;
  externalCustomerId: string;
  value: string;
}

/** SQL statements of one batch run at once (each is one LATERAL scan over many ranges). */
const BATCH_PARALLELISM = 2;

/** The same filters however written: properties sorted, each one's values sorted and unique. */
function canonicalFilters(filters: MeterFilter[] | undefined): MeterFilter[] {
  return (filters ?? [])
    .map((f) => ({ key: f.key, values: [...new Set(f.values)].sort() }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

export const MAX_WINDOWS = 10_000;
const UNIT_MS: Record<WindowSize, number> = { HOUR: 3_600_000, DAY: 86_400_000 };

/** Whole-second epoch milliseconds of a normalised timestamp (fraction dropped). */
const secondsOf = (t: string) => Date.parse(`${t.slice(0, 19)}Z`);
const windowKey = (ms: number) => `${new Date(ms).toISOString().slice(0, 19)}.000000Z`;
const valueOf = (v: string | null | undefined) => toDecimalString(v ?? '0');

/** The windows of [from, to): whole UTC hours or days, the first and last clipped to the range. */
export function windowsOf(from: string, to: string, size: WindowSize): Array<{ key: string; start: string; end: string }> {
  const unit = UNIT_MS[size];
  const first = Math.floor(secondsOf(from) / unit) * unit;
  const count = Math.ceil((secondsOf(to) - first) / unit) + 1;
  if (count > MAX_WINDOWS + 1) {
    throw new ValidationError(`The range holds more than ${MAX_WINDOWS} ${size} windows; use a shorter range or DAY windows`, {
      field: 'window_size',
      max_windows: MAX_WINDOWS,
    });
  }
  const out: Array<{ key: string; start: string; end: string }> = [];
  for (let b = first; windowKey(b) < to; b += unit) {
    const key = windowKey(b);
    const next = windowKey(b + unit);
    out.push({ key, start: key < from ? from : key, end: next > to ? to : next });
  }
  return out;
}

export class MeterService {
  constructor(
    private readonly db: Db,
    private readonly meters: MeterStore,
    private readonly usageStore: UsageStore,
    private readonly rollupUsage: RollupUsageStore,
    private readonly rollups: RollupBuilder,
  ) {}

  /** Where a meter's usage is read: its rollup when that answers exactly, else its events. */
  private readerOf(meter: Meter, extraFilters: MeterFilter[] | undefined): UsageStore | RollupUsageStore {
    return rollupCovers(meter, extraFilters) ? this.rollupUsage : this.usageStore;
  }

  async create(scope: Scope, input: NewMeter): Promise<Meter> {
    const now = new Date();
    const meter: Meter = {
      id: newId('meter'),
      tenantId: scope.tenantId,
      environmentId: scope.environmentId,
      name: input.name,
      eventName: input.eventName,
      aggregationType: input.aggregationType,
      aggregationField: input.aggregationField ?? null,
      filters: input.filters,
      createdAt: now,
      updatedAt: now,
      rollupReadyAt: null,
      rollupSeries: '',
    };
    await this.meters.insert(this.db, meter);
    this.rollups.schedule(meter.id);
    return meter;
  }

  async get(scope: Scope, id: string): Promise<Meter> {
    const meter = await this.meters.get(this.db, scope, id);
    if (!meter) throw new NotFoundError('Meter not found', { meter_id: id });
    return meter;
  }

  list(scope: Scope, limit: number, offset: number) {
    return this.meters.list(this.db, scope, limit, offset);
  }

  async usage(scope: Scope, id: string, req: UsageRequest): Promise<Usage> {
    const meter = await this.get(scope, id);
    const windows = req.windowSize ? windowsOf(req.from, req.to, req.windowSize) : [];
    const rows = await this.readerOf(meter, req.extraFilters).aggregate(this.db, scope, {
      meter,
      externalCustomerId: req.externalCustomerId,
      from: req.from,
      to: req.to,
      windowSize: req.windowSize,
      extraFilters: req.extraFilters,
    });
    return {
      meterId: meter.id,
      value: valueOf(rows.total),
      windows: windows.map((w) => ({ start: w.start, end: w.end, value: valueOf(rows.byWindow.get(w.key)) })),
    };
  }

  /**
   * The `value` of `usage` for each query, in their order. The meters are read once (one
   * statement for all); an unknown one fails the whole batch (404 naming it). Queries of the
   * same meter and extra filters make one statement over all their (customer, range) pairs,
   * each distinct pair once (duplicates share its value).
   */
  async usageBatch(scope: Scope, queries: UsageBatchQuery[]): Promise<UsageBatchValue[]> {
    const meters = await this.meters.getMany(this.db, scope, queries.map((q) => q.meterId));
    const missing = queries.find((q) => !meters.has(q.meterId));
    if (missing) throw new NotFoundError('Meter not found', { meter_id: missing.meterId });

    interface Group {
      meter: Meter;
      extraFilters: MeterFilter[];
      ranges: Array<{ externalCustomerId: string; from: string; to: string }>;
      rangeIndex: Map<string, number>;
      values?: Array<string | null>;
    }
    const groups = new Map<string, Group>();
    const placeOf = queries.map((q) => {
      const extraFilters = canonicalFilters(q.extraFilters);
      const groupKey = JSON.stringify([q.meterId, extraFilters]);
      let group = groups.get(groupKey);
      if (!group) {
        group = { meter: meters.get(q.meterId) as Meter, extraFilters, ranges: [], rangeIndex: new Map() };
        groups.set(groupKey, group);
      }
      const rangeKey = JSON.stringify([q.externalCustomerId, q.from, q.to]);
      let index = group.rangeIndex.get(rangeKey);
      if (index === undefined) {
        index = group.ranges.push({ externalCustomerId: q.externalCustomerId, from: q.from, to: q.to }) - 1;
        group.rangeIndex.set(rangeKey, index);
      }
      return { group, index };
    });

    const pending = [...groups.values()];
    const worker = async () => {
      for (let g = pending.shift(); g; g = pending.shift()) {
        g.values = await this.readerOf(g.meter, g.extraFilters).aggregateMany(this.db, scope, { meter: g.meter, extraFilters: g.extraFilters, ranges: g.ranges });
      }
    };
    await Promise.all(Array.from({ length: Math.min(BATCH_PARALLELISM, pending.length) }, worker));

    return queries.map((q, i) => {
      const { group, index } = placeOf[i];
      return { meterId: q.meterId, externalCustomerId: q.externalCustomerId, value: valueOf((group.values as Array<string | null>)[index]) };
    });
  }
}
