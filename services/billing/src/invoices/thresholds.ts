import type { Scope } from '@billstream/contracts';
import type { Db } from '@billstream/db';
import type { Logger } from '@billstream/logger';
import type { Meters } from '../clients/meters/domain';
import type { Price } from '../prices/domain';
import { sumAmounts } from '@billstream/pricing';
import { stepsUntil } from '../subscriptions/lifecycle';
import type { SubscriptionStore } from '../subscriptions/store';
import { arrearWindow, invoiceLines, partWindow } from './lines';
import type { InvoiceMaker } from './maker';
import type { InvoiceStore } from './store';
export { withThresholdDeductions } from './threshold-deductions';

/** Aggregations whose value never falls as events arrive (SUM can, with negative values: its deduction is capped). */
const GROWING = new Set(['COUNT', 'SUM', 'MAX', 'UNIQUE_COUNT']);
const CONCURRENCY = 4;

/**
 * Whether a usage price can be billed at a threshold (docs/api/thresholds.md): its amount cannot
 * fall as usage grows. FLAT_FEE, PACKAGE and SLAB tiers on COUNT, SUM, MAX or UNIQUE_COUNT can;
 * VOLUME tiers (a higher quantity can price every unit lower) and LATEST wait for the period's end.
 */
export function thresholdEligible(p: Price, aggregation: string | undefined): boolean {
  if (p.type !== 'USAGE' || !p.meterId || !aggregation || !GROWING.has(aggregation)) return false;
  return p.billingModel === 'FLAT_FEE' || p.billingModel === 'PACKAGE' || (p.billingModel === 'TIERED' && p.tierMode === 'SLAB');
}

export interface ThresholdBillingDeps {
  db: Db;
  subscriptions: SubscriptionStore;
  invoices: InvoiceStore;
  maker: InvoiceMaker;
  meters: Meters;
  clock: () => Date;
  published: () => void;
  logger: Logger;
}

/**
 * Progressive billing (docs/api/thresholds.md, ADR 0046): while a subscription is `active`, its
 * period-to-date usage amount (its usage lines from the period start, or the last plan change,
 * to now; before discounts) is compared with its `usage_thresholds`. The highest one newly
 * crossed issues one SUBSCRIPTION_THRESHOLD invoice for [s, now): the eligible prices' usage to
 * date less what earlier threshold invoices of the period billed. Once per crossing: the
 * invoice is unique by (subscription, period start, reason, sequence = the threshold's index),
 * and the check runs under the subscription's row lock with its version unchanged (the period did
 * not move meanwhile), so two replicas and the usage notices racing make one invoice.
 */
export class ThresholdBilling {
  private readonly db: Db;
  private readonly subscriptions: SubscriptionStore;
  private readonly invoices: InvoiceStore;
  private readonly maker: InvoiceMaker;
  private readonly meters: Meters;
  private readonly clock: () => Date;
  private readonly published: () => void;
  private readonly logger: Logger;

  constructor(deps: ThresholdBillingDeps) {
    ({ db: this.db, subscriptions: this.subscriptions, invoices: this.invoices, maker: this.maker, meters: this.meters, clock: this.clock, published: this.published, logger: this.logger } = deps);
  }

  /** A meter's aggregation never changes: asked once per meter. */
  private readonly aggregations = new Map<string, string | undefined>();

  /** The period job: every active subscription with thresholds (of `scope` only when given); answers how many invoices were made. */
  async runOnce(requestId: string, scope?: Scope): Promise<number> {
    return this.checkAll(await this.subscriptions.withThresholds(this.db, scope), requestId);
  }

  /** Usage was stored for these customers (the usage notices): their subscriptions with thresholds are checked. */
  async checkCustomers(scope: Scope, customerIds: string[], requestId: string): Promise<number> {
    if (customerIds.length === 0) return 0;
    return this.checkAll(await this.subscriptions.withThresholds(this.db, scope, customerIds), requestId);
  }

  private async checkAll(ids: string[], requestId: string): Promise<number> {
    let made = 0;
    const rest = await this.mayHaveCrossed(ids, requestId).catch((err: unknown) => {
      this.logger.warn('threshold billing: the batch read failed; every subscription is checked on its own', { err });
      return [...ids];
    });
    const worker = async () => {
      for (let id = rest.shift(); id !== undefined; id = rest.shift()) {
        try {
          if (await this.check(id, requestId)) made += 1;
        } catch (err) {
          this.logger.warn('threshold billing: checking a subscription failed; the next run checks it again', { err, subscription_id: id });
        }
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    return made;
  }

  /**
   * The subscriptions of `ids` whose period-to-date amount, read in batch (one aggregator call
   * per scope, as the unbilled usage reads it), crosses a threshold above the highest one
   * invoiced in their period part; `check` then reads and decides each again, under its lock.
   * The others have no new crossing now. Without it every notified subscription cost one
   * aggregator call per usage price and a few reads, 1.16-1.43 times the CPU per stored event
   * of the same load without thresholds (bench/billing/thresholds.js).
   */
  private async mayHaveCrossed(ids: string[], requestId: string): Promise<string[]> {
    if (ids.length === 0) return [];
    const now = this.clock();
    const subs = (await this.subscriptions.getByIds(this.db, ids)).filter(
      (s) => s.status === 'active' && s.usageThresholds.length > 0 && s.currentPeriodStart && s.currentPeriodEnd && stepsUntil(s, now).length === 0,
    );
    if (subs.length === 0) return [];
    const pricesOf = await this.maker.pricesOfMany(this.db, subs);
    const work = subs
      .map((s) => {
        const period = { start: s.currentPeriodStart!, end: s.currentPeriodEnd! };
        const from = arrearWindow(s, period).start;
        return { s, from, prices: (pricesOf.get(s.id) ?? []).filter((p) => p.type === 'USAGE' && p.meterId), window: partWindow(s, period, from, now) };
      })
      .filter((w) => w.prices.length > 0);
    if (work.length === 0) return [];
    const { usage, missing } = await this.maker.usageOfWindows(work, requestId);
    const invoiced = await this.lastThresholdIndexes(work.map((w) => w.s.id));
    return work
      .filter((w) => {
        // An unknown customer: its own check reads, and reports, it.
        if (missing.has(w.s.id)) return true;
        const amount = sumAmounts(invoiceLines(w.prices, { window: w.window, usage: usage.get(w.s.id)! }, null));
        const crossed = w.s.usageThresholds.reduce((at, t, i) => (t <= amount ? i : at), -1);
        return crossed >= 0 && crossed > (invoiced.get(`${w.s.id}@${w.from.getTime()}`) ?? -1);
      })
      .map((w) => w.s.id);
  }

  /** The highest threshold index invoiced (voided ones too) per subscription and period part, keyed `{id}@{period start ms}`. */
  private async lastThresholdIndexes(subscriptionIds: string[]): Promise<Map<string, number>> {
    const rows = await this.db('invoices')
      .whereIn('subscription_id', subscriptionIds)
      .where({ billing_reason: 'SUBSCRIPTION_THRESHOLD' })
      .groupBy('subscription_id', 'period_start')
      .select<Array<{ subscription_id: string; period_start: Date; last: number }>>('subscription_id', 'period_start', this.db.raw('max(sequence::integer) AS last'));
    return new Map(rows.map((r) => [`${r.subscription_id}@${r.period_start.getTime()}`, Number(r.last)]));
  }

  /** Checks one subscription; answers whether it made a threshold invoice. */
  async check(id: string, requestId: string): Promise<boolean> {
    const s = await this.subscriptions.getById(this.db, id);
    if (!s || s.status !== 'active' || s.usageThresholds.length === 0 || !s.currentPeriodStart || !s.currentPeriodEnd) return false;
    const now = this.clock();
    // A period that ended is closed by the period job first (its closing invoice bills it).
    if (stepsUntil(s, now).length > 0) return false;
    const prices = (await this.maker.pricesOf(this.db, s)).filter((p) => p.type === 'USAGE' && p.meterId);
    if (prices.length === 0) return false;
    const period = { start: s.currentPeriodStart, end: s.currentPeriodEnd };
    const from = arrearWindow(s, period).start;
    const window = partWindow(s, period, from, now);
    const lines = invoiceLines(prices, { window, usage: await this.maker.usage(s, prices, window, requestId) }, null);
    const amount = sumAmounts(lines);
    const crossed = s.usageThresholds.reduce((at, t, i) => (t <= amount ? i : at), -1);
    if (crossed < 0) return false;
    const eligible = new Set<string>();
    for (const p of prices) if (thresholdEligible(p, await this.aggregationOf(s, p.meterId!, requestId))) eligible.add(p.id);
    const billable = lines.filter((l) => l.priceId && eligible.has(l.priceId)).map((l, position) => ({ ...l, position }));
    const draft = this.maker.draft(s, 'SUBSCRIPTION_THRESHOLD', { start: from, end: now }, billable, now);
    if (!draft) return false;
    const written = await this.db.transaction(async (trx) => {
      const locked = await this.subscriptions.getForUpdate(trx, s, id);
      if (!locked || locked.version !== s.version) return 0;
      if ((await this.invoices.lastThresholdIndex(trx, id, from)) >= crossed) return 0;
      return this.maker.write(trx, [{ ...draft, sequence: String(crossed) }]);
    });
    if (written > 0) this.published();
    return written > 0;
  }

  private async aggregationOf(scope: Scope, meterId: string, requestId: string): Promise<string | undefined> {
    if (!this.aggregations.has(meterId)) this.aggregations.set(meterId, await this.meters.aggregation(scope, meterId, requestId));
    return this.aggregations.get(meterId);
  }
}

