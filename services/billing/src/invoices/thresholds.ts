import type { Scope } from '@billstream/contracts';
import type { Db } from '@billstream/db';
import type { Logger } from '@billstream/logger';
import type { Meters } from '../clients/meters/domain';
import type { Price } from '../prices/domain';
import { sumAmounts } from '../pricing';
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
 * Whether a usage price can be billed at a threshold (BILLING-2.md section 9): its amount cannot
 * fall as usage grows. FLAT_FEE, PACKAGE and SLAB tiers on COUNT, SUM, MAX or UNIQUE_COUNT can;
 * VOLUME tiers (a higher quantity can price every unit lower) and LATEST wait for the period's end.
 */
export function thresholdEligible(p: Price, aggregation: string | undefined): boolean {
  if (p.type !== 'USAGE' || !p.meterId || !aggregation || !GROWING.has(aggregation)) return false;
  return p.billingModel === 'FLAT_FEE' || p.billingModel === 'PACKAGE' || (p.billingModel === 'TIERED' && p.tierMode === 'SLAB');
}

/**
 * Progressive billing (BILLING-2.md section 9, ADR 0046): while a subscription is `active`, its
 * period-to-date usage amount (its usage lines from the period start, or the last plan change,
 * to now; before discounts) is compared with its `usage_thresholds`. The highest one newly
 * crossed issues one SUBSCRIPTION_THRESHOLD invoice for [s, now): the eligible prices' usage to
 * date less what earlier threshold invoices of the period billed. Once per crossing: the
 * invoice is unique by (subscription, period start, reason, sequence = the threshold's index),
 * and the check runs under the subscription's row lock with its version unchanged (the period did
 * not move meanwhile), so two replicas and the usage notices racing make one invoice.
 */
export class ThresholdBilling {
  /** A meter's aggregation never changes: asked once per meter. */
  private readonly aggregations = new Map<string, string | undefined>();

  constructor(
    private readonly db: Db,
    private readonly subscriptions: SubscriptionStore,
    private readonly invoices: InvoiceStore,
    private readonly maker: InvoiceMaker,
    private readonly meters: Meters,
    private readonly clock: () => Date,
    private readonly published: () => void,
    private readonly logger: Logger,
  ) {}

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
    const rest = [...ids];
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

