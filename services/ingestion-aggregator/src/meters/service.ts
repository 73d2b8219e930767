import type { AggregationType, Scope, WindowSize } from '@billstream/contracts';
import type { Db } from '@billstream/db';
import { NotFoundError, ValidationError } from '@billstream/errors';
import { newId } from '@billstream/ids';
import { toDecimalString } from '@billstream/money';
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
  ) {}

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
    };
    await this.meters.insert(this.db, meter);
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
    const rows = await this.usageStore.aggregate(this.db, scope, {
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
}
