import type { Scope } from '@billstream/contracts';
import type { Db } from '@billstream/db';
import type { Logger } from '@billstream/logger';
import { RollupBuilder } from '../meters/rollup-builder';
import { RollupUsageStore } from '../meters/rollup-usage-store';
import type { Meter, MeterStore } from '../meters/store';
import { UsageStore } from '../meters/usage-store';
import { usageValue, usageView } from './usage-view';

/** Runs the rollup builder until no meter's rollup is pending (what a start after an upgrade does). */
export async function rebuildRollups(db: Db, meterStore: MeterStore, logger: Logger, attempts = 300): Promise<void> {
  const builder = new RollupBuilder(db, meterStore, logger);
  await builder.start();
  for (let i = 0; i < attempts && (await meterStore.rollupsPending(db)).length > 0; i += 1) await new Promise((res) => setTimeout(res, 50));
  await builder.stop();
}

/** One answer of the rollup beside the raw scan's (the tests expect them equal). */
export interface RollupComparison {
  meter: Meter;
  rolled: unknown;
  raw: unknown;
}

/**
 * The rollup's and the raw scan's answers of every meter of `meterIds` for each range (in
 * total, HOUR and DAY windows, for each customer), and of `aggregateMany` over the ranges for
 * the first customer.
 */
export async function rollupAndRawAnswers(db: Db, scope: Scope, meterStore: MeterStore, meterIds: string[], ranges: string[][], customers: string[]): Promise<RollupComparison[]> {
  const raw = new UsageStore();
  const rolled = new RollupUsageStore();
  const out: RollupComparison[] = [];
  for (const id of meterIds) {
    const meter = (await meterStore.byId(db, id)) as Meter;
    for (const [from, to] of ranges) {
      for (const windowSize of [undefined, 'HOUR', 'DAY'] as const) {
        for (const externalCustomerId of customers) {
          const q = { meter, externalCustomerId, from, to, windowSize };
          const label = { meter: meter.name, from, to, windowSize, customer: externalCustomerId };
          out.push({
            meter,
            rolled: { ...label, ...usageView(await rolled.aggregate(db, scope, q), from, to, windowSize) },
            raw: { ...label, ...usageView(await raw.aggregate(db, scope, q), from, to, windowSize) },
          });
        }
      }
    }
    const many = ranges.map(([from, to]) => ({ externalCustomerId: customers[0], from, to }));
    out.push({
      meter,
      rolled: { meter: meter.name, many: (await rolled.aggregateMany(db, scope, { meter, ranges: many })).map(usageValue) },
      raw: { meter: meter.name, many: (await raw.aggregateMany(db, scope, { meter, ranges: many })).map(usageValue) },
    });
  }
  return out;
}
