import type { Db } from '@billstream/db';
import { ServiceUnavailableError } from '@billstream/errors';
import { stepsUntil } from '../subscriptions/lifecycle';
import { TOPICS } from '@billstream/bus';
import { outboxInsertMany } from '@billstream/outbox';
import { announce, announcement } from '../subscriptions/events';
import type { SubscriptionStore } from '../subscriptions/store';
import type { Invoice } from './domain';
import { invoiceLines, needsUsage, type ChargeWindow } from './lines';
import type { InvoiceMaker } from './maker';
import { trueUpAgain } from './commitments';
import { withThresholdDeductions } from './threshold-deductions';
import type { InvoiceStore } from './store';
import { reprice } from './lifecycle';
import type { PriceStore } from '../prices/store';
import type { SubscriptionGrants } from '../subscriptions/grants';

export interface CatchUp {
  /** Periods the subscription moved through. */
  periods: number;
  invoices: number;
}

const ATTEMPTS = 5;
/** Subscriptions written per transaction by `catchUpMany`. */
const WRITE_CHUNK = 50;

export interface PeriodBillingDeps {
  db: Db;
  subscriptions: SubscriptionStore;
  invoices: InvoiceStore;
  maker: InvoiceMaker;
  clock: () => Date;
  published: () => void;
  prices: PriceStore;
  /** Credit grants follow a plan change applied at a period end (ADR 0039, 0043). */
  grants?: SubscriptionGrants;
}

/**
 * Invoices the periods of a subscription that ended and moves it to its current period, in one
 * transaction (ADR 0016). Usage is read first; the transaction then checks the subscription
 * did not change meanwhile (its version), else it reads again. Safe to repeat and to run on
 * several replicas: the period advance and the invoices' unique keys commit together.
 */
export class PeriodBilling {
  private readonly db: Db;
  private readonly subscriptions: SubscriptionStore;
  private readonly invoices: InvoiceStore;
  private readonly maker: InvoiceMaker;
  private readonly clock: () => Date;
  private readonly published: () => void;
  private readonly prices: PriceStore;
  private readonly grants: SubscriptionGrants | undefined;

  constructor(deps: PeriodBillingDeps) {
    ({ db: this.db, subscriptions: this.subscriptions, invoices: this.invoices, maker: this.maker, clock: this.clock, published: this.published, prices: this.prices, grants: this.grants } = deps);
  }

  async catchUp(id: string, requestId: string): Promise<CatchUp> {
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const s = await this.subscriptions.getById(this.db, id);
      if (!s) return { periods: 0, invoices: 0 };
      const now = this.clock();
      const steps = stepsUntil(s, now);
      if (steps.length === 0) return { periods: 0, invoices: 0 };
      const prices = await this.maker.pricesOf(this.db, s);
      // A pending plan change applied at a period end (docs/api/plan-changes.md): the next periods bill its prices.
      const applying = steps.find((st) => st.applied);
      const switched = applying ? await this.prices.getMany(this.db, s, applying.applied!.priceIds) : undefined;
      const drafts = await this.maker.forSteps(s, steps, prices, now, requestId, undefined, switched);
      const done = await this.db.transaction(async (trx) => {
        const locked = await this.subscriptions.getForUpdate(trx, s, id);
        if (!locked || locked.version !== s.version) return undefined;
        const last = steps.at(-1)!;
        const saved = await this.subscriptions.save(trx, last.subscription);
        await announce(trx, { tenantId: s.tenantId, environmentId: s.environmentId, actor: 'system' }, last.event, saved);
        if (applying) {
          await this.subscriptions.replacePrices(trx, s.id, applying.applied!.priceIds);
          await this.grants?.planChanged(trx, s, applying.subscription, applying.closed.end, false);
        }
        return { periods: steps.length, invoices: await this.maker.write(trx, drafts) };
      });
      if (done) {
        this.published();
        if (applying) await this.grants?.settle(s, s.id, requestId);
        return done;
      }
    }
    throw new ServiceUnavailableError(`Subscription ${id} kept changing while its periods were billed; retry later`);
  }

  /**
   * `catchUp` for a batch of subscriptions (the period job): their rows, prices, customers and
   * usage are read together (one aggregator call per tenant and environment), then each chunk
   * of them is written in one transaction that locks the chunk's rows and checks every version,
   * as `catchUp` does for one. A subscription that changed meanwhile, or a chunk that fails, goes
   * through `catchUp` on its own. Answers each id's result or error.
   */
  async catchUpMany(ids: string[], requestId: string): Promise<Map<string, CatchUp | { error: unknown }>> {
    const out = new Map<string, CatchUp | { error: unknown }>(ids.map((id) => [id, { periods: 0, invoices: 0 }]));
    const alone = new Set<string>();
    try {
      const now = this.clock();
      const all = (await this.subscriptions.getByIds(this.db, ids)).map((s) => ({ s, steps: stepsUntil(s, now) })).filter((d) => d.steps.length > 0);
      // A pending plan change to apply takes the one-by-one path (its new prices, its grants).
      for (const d of all) if (d.steps.some((st) => st.applied)) alone.add(d.s.id);
      const due = all.filter((d) => !alone.has(d.s.id));
      const prices = await this.maker.pricesOfMany(this.db, due.map((d) => d.s));
      const work = due.map((d) => ({ ...d, prices: prices.get(d.s.id) ?? [] }));
      const { lookup, missing } = await this.maker.usageOfMany(work, requestId);
      const ready: Array<(typeof work)[number] & { drafts: Awaited<ReturnType<InvoiceMaker['forSteps']>> }> = [];
      for (const w of work) {
        if (missing.has(w.s.id)) alone.add(w.s.id);
        else ready.push({ ...w, drafts: await this.maker.forSteps(w.s, w.steps, w.prices, now, requestId, lookup) });
      }
      for (let at = 0; at < ready.length; at += WRITE_CHUNK) {
        const chunk = ready.slice(at, at + WRITE_CHUNK);
        try {
          const done = await this.db.transaction(async (trx) => {
            const locked = new Map((await this.subscriptions.lockMany(trx, chunk.map((c) => c.s.id))).map((l) => [l.id, l]));
            const results = new Map<string, CatchUp>();
            const written = chunk.filter((c) => locked.get(c.s.id)?.version === c.s.version);
            // Every subscription of the chunk in one statement.
            const saved = await this.subscriptions.saveMany(
              trx,
              written.map((c) => c.steps.at(-1)!.subscription),
            );
            const events: Parameters<typeof outboxInsertMany>[2] = written.map((c, k) =>
              announcement({ tenantId: c.s.tenantId, environmentId: c.s.environmentId, actor: 'system' }, c.steps.at(-1)!.event, saved[k]!),
            );
            // Every draft of the chunk in two statements, every event in one.
            const drafts = await this.maker.discounted(trx, written.flatMap((c) => c.drafts));
            const inserted = await this.invoices.insertMany(trx, drafts);
            events.push(...this.maker.draftedEvents(drafts, inserted));
            if (events.length > 0) await outboxInsertMany(trx, TOPICS.billingEvents, events);
            for (const c of written) results.set(c.s.id, { periods: c.steps.length, invoices: c.drafts.filter((d) => inserted.has(d.id)).length });
            return results;
          });
          if (done.size > 0) this.published();
          for (const c of chunk) {
            const result = done.get(c.s.id);
            if (result) out.set(c.s.id, result);
            else alone.add(c.s.id);
          }
        } catch {
          for (const c of chunk) alone.add(c.s.id);
        }
      }
    } catch (error) {
      // The batch's reads failed before anything was written. The aggregator is down (a 503):
      // every subscription is retried when its claim expires, not one by one against the same
      // outage. Anything else (a meter the aggregator does not know, say): each on its own.
      if (error instanceof ServiceUnavailableError) for (const id of ids) out.set(id, { error });
      else for (const id of ids) alone.add(id);
    }
    const rest = [...alone];
    const worker = async () => {
      for (let id = rest.shift(); id !== undefined; id = rest.shift()) {
        try {
          out.set(id, await this.catchUp(id, requestId));
        } catch (error) {
          out.set(id, { error });
        }
      }
    };
    await Promise.all([worker(), worker(), worker(), worker()]);
    return out;
  }

  /**
   * Reprices a draft's usage lines with the usage known now and freezes it (its lines never
   * change again), when it was made before its grace window ended; answers the draft to
   * finalize, or undefined when it is no longer a draft.
   */
  async reprice(draft: Invoice, requestId: string): Promise<Invoice | undefined> {
    if (!draft.subscriptionId || !draft.periodStart || !draft.periodEnd || !draft.lines.some((l) => l.priceType === 'USAGE')) return draft;
    const s = await this.subscriptions.getById(this.db, draft.subscriptionId);
    if (!s) return draft;
    // The prices and the window the draft's usage lines billed (a plan change since moved the subscription to other prices).
    const usageLines = draft.lines.filter((l) => l.priceType === 'USAGE' && l.priceId && l.lineType === 'CHARGE');
    const first = usageLines[0];
    if (!first) return draft;
    const prices = await this.prices.getMany(this.db, s, [...new Set(usageLines.map((l) => l.priceId!))]);
    if (!needsUsage(prices)) return draft;
    const window: ChargeWindow = {
      start: first.periodStart ?? draft.periodStart,
      end: first.periodEnd ?? draft.periodEnd,
      ...(first.billingPeriodStart ? { billingPeriodStart: first.billingPeriodStart } : {}),
    };
    const usage = await this.maker.usage(s, prices, window, requestId);
    const fresh = invoiceLines(prices, { window, usage }, null).filter((l) => l.priceType === 'USAGE');
    return this.db.transaction(async (trx) => {
      const locked = await this.invoices.getForUpdate(trx, draft.id);
      if (!locked || locked.status !== 'draft') return undefined;
      if (locked.frozenAt) return locked;
      // Usage CHARGE lines are priced again; threshold deductions are computed again on them (ADR 0046).
      const kept = locked.lines.filter((l) => !(l.priceType === 'USAGE' && l.priceId && l.lineType === 'CHARGE') && l.lineType !== 'THRESHOLD_DEDUCTION');
      const sorted = [...fresh, ...kept].sort((a, b) => order(locked, a) - order(locked, b)).map((l, position) => ({ ...l, position }));
      const [deducted] = await withThresholdDeductions(trx, this.invoices, [{ ...locked, lines: sorted }]);
      // The commitment's true-up follows the new usage: computed again on the new lines, never kept stale (ADR 0042).
      const lines = await trueUpAgain(trx, this.invoices, s, locked, deducted!.lines);
      const now = this.clock();
      // The discounts it carries, recomputed on the new lines: their stored amounts are replaced, never added to.
      const { invoice: repriced } = reprice(locked, await this.maker.repriced(trx, { ...locked, lines }), now);
      await this.invoices.replaceLines(trx, repriced);
      return this.invoices.save(trx, repriced);
    });
  }
}

/** Keeps a repriced draft's order: a line goes where the first line of its price was. */
function order(i: Invoice, l: { priceId: string | null; position: number; priceType: string }): number {
  const at = i.lines.findIndex((x) => x.priceId === l.priceId && x.priceType === l.priceType);
  return (at < 0 ? i.lines.length : at) * 1000 + l.position;
}
