import type { Scope, UnbilledUsageBody } from '@billstream/contracts';
import type { Db } from '@billstream/db';
import type { Logger } from '@billstream/logger';
import type { UnbilledCalculator } from './calculator';
import type { UnbilledStore } from './store';

/** Customers per computation and wallet call. */
const BATCH = 200;

export interface UnbilledSettings {
  /** How long a notified customer waits for others before its usage is recomputed (UNBILLED_DEBOUNCE_MS). */
  debounceMs: number;
  /** How often every customer with running usage subscriptions or drafts is recomputed; 0: never (UNBILLED_SWEEP_MS). */
  sweepMs: number;
}

/** Where the computed amounts go: the wallet service's internal endpoint. */
export type UnbilledSink = (scope: Scope, body: UnbilledUsageBody, requestId: string) => Promise<void>;

interface Pending {
  scope: Scope;
  customerIds: Set<string>;
  externalIds: Set<string>;
}

export interface UnbilledRefresherDeps {
  db: Db;
  store: UnbilledStore;
  calculator: UnbilledCalculator;
  sink: UnbilledSink;
  logger: Logger;
  clock: () => Date;
  settings: UnbilledSettings;
  /** Runs first for each batch of notified customers: their threshold checks (ADR 0046), so a threshold invoice made now is counted. */
  beforeCompute?: (scope: Scope, customerIds: string[], requestId: string) => Promise<unknown>;
}

/**
 * Keeps the wallets' unbilled usage fresh (ADR 0024). Notified customers (usage stored, or a
 * sweep) are collected for `debounceMs` from the first one, then recomputed in batches of 200
 * per scope (one snapshot read, one aggregator call, one wallet call per batch): thousands of
 * events per second of a few customers cost a few recomputations per second. One round runs at
 * a time; customers notified meanwhile are collected and recomputed by the next round, which
 * starts as soon as this one ends. A failed batch is logged and left to
 * the next notification or sweep: the amounts are recomputed from stored data, never patched.
 */
export class UnbilledRefresher {
  private pending = new Map<string, Pending>();
  private timer: NodeJS.Timeout | undefined;
  private sweepTimer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private lastSweep: Date | undefined;
  private stopped = false;

  constructor(private readonly deps: UnbilledRefresherDeps) {}

  start(): void {
    this.stopped = false;
    if (this.deps.settings.sweepMs > 0) {
      this.sweepTimer = setInterval(() => {
        this.sweep().catch((err) => this.deps.logger.warn('unbilled usage sweep failed', { err }));
      }, this.deps.settings.sweepMs);
      this.sweepTimer.unref();
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** Usage of these customers (by billing id or by external id) may have changed. */
  touch(scope: Scope, ids: { customerIds?: string[]; externalIds?: string[] }): void {
    if (this.stopped) return;
    const key = `${scope.tenantId}\u0000${scope.environmentId}`;
    const p = this.pending.get(key) ?? { scope: { tenantId: scope.tenantId, environmentId: scope.environmentId }, customerIds: new Set(), externalIds: new Set() };
    this.pending.set(key, p);
    for (const id of ids.customerIds ?? []) p.customerIds.add(id);
    for (const id of ids.externalIds ?? []) p.externalIds.add(id);
    this.schedule();
  }

  /**
   * The first note waits `debounceMs` for others; notes that arrive while a round runs have
   * waited for it already, so the next round starts as soon as it ends.
   */
  private schedule(delayMs = this.deps.settings.debounceMs): void {
    if (this.timer || this.running || this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.running = this.round().finally(() => {
        this.running = undefined;
        if (this.pending.size > 0) this.schedule(0);
      });
    }, delayMs);
    this.timer.unref();
  }

  /** Recomputes every customer notified so far; resolves when their wallets have the amounts. */
  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
    await this.round();
  }

  /** Every customer with running usage subscriptions or drafts, and those changed since the last sweep. */
  async sweep(): Promise<void> {
    const now = this.deps.clock();
    const since = this.lastSweep ?? new Date(now.getTime() - 2 * Math.max(this.deps.settings.sweepMs, 60_000));
    const customers = await this.deps.store.sweepCustomers(this.deps.db, since);
    this.lastSweep = now;
    for (const c of customers) this.touch(c, { customerIds: [c.customerId] });
  }

  private async round(): Promise<void> {
    const work = [...this.pending.values()];
    this.pending = new Map();
    const started = process.hrtime.bigint();
    let customers = 0;
    const requestId = `unbilled-${this.deps.clock().getTime()}`;
    for (const { scope, customerIds, externalIds } of work) {
      try {
        const ids = new Set([...customerIds, ...(await this.deps.store.customerIdsOf(this.deps.db, scope, [...externalIds]))]);
        const all = [...ids];
        customers += all.length;
        for (let at = 0; at < all.length; at += BATCH) {
          const batch = all.slice(at, at + BATCH);
          try {
            if (this.deps.beforeCompute) {
              await this.deps.beforeCompute(scope, batch, requestId).catch((err: unknown) =>
                this.deps.logger.warn('threshold checks of notified customers failed; the period job checks them again', { err, tenant_id: scope.tenantId }),
              );
            }
            await this.deps.sink(scope, await this.deps.calculator.compute(scope, batch, requestId), requestId);
          } catch (err) {
            this.deps.logger.warn('unbilled usage not refreshed; the next notification or sweep retries', { err, tenant_id: scope.tenantId, customers: batch.length });
          }
        }
      } catch (err) {
        this.deps.logger.warn('unbilled usage customers not resolved', { err, tenant_id: scope.tenantId });
      }
    }
    this.deps.logger.info('unbilled usage refreshed', { scopes: work.length, customers, duration_ms: Number(process.hrtime.bigint() - started) / 1e6 });
  }
}
