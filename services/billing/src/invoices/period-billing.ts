import type { Db } from '@billstream/db';
import { ServiceUnavailableError } from '@billstream/errors';
import { stepsUntil } from '../subscriptions/lifecycle';
import { announce } from '../subscriptions/events';
import type { SubscriptionStore } from '../subscriptions/store';
import { totalsOf, type Invoice } from './domain';
import { invoiceLines, needsUsage, wholeWindow } from './lines';
import type { InvoiceMaker } from './maker';
import type { InvoiceStore } from './store';

export interface CatchUp {
  /** Periods the subscription moved through. */
  periods: number;
  invoices: number;
}

const ATTEMPTS = 5;

/**
 * Invoices the periods of a subscription that ended and moves it to its current period, in one
 * transaction (ADR 0016). Usage is read first; the transaction then checks the subscription
 * did not change meanwhile (its version), else it reads again. Safe to repeat and to run on
 * several replicas: the period advance and the invoices' unique keys commit together.
 */
export class PeriodBilling {
  constructor(
    private readonly db: Db,
    private readonly subscriptions: SubscriptionStore,
    private readonly invoices: InvoiceStore,
    private readonly maker: InvoiceMaker,
    private readonly clock: () => Date,
    private readonly published: () => void,
  ) {}

  async catchUp(id: string, requestId: string): Promise<CatchUp> {
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const s = await this.subscriptions.byId(this.db, id);
      if (!s) return { periods: 0, invoices: 0 };
      const now = this.clock();
      const steps = stepsUntil(s, now);
      if (steps.length === 0) return { periods: 0, invoices: 0 };
      const prices = await this.maker.pricesOf(this.db, s);
      const drafts = await this.maker.forSteps(s, steps, prices, now, requestId);
      const done = await this.db.transaction(async (trx) => {
        const locked = await this.subscriptions.getForUpdate(trx, s, id);
        if (!locked || locked.version !== s.version) return undefined;
        const last = steps.at(-1)!;
        const saved = await this.subscriptions.save(trx, last.subscription);
        await announce(trx, { tenantId: s.tenantId, environmentId: s.environmentId, actor: 'system' }, last.event, saved);
        return { periods: steps.length, invoices: await this.maker.write(trx, drafts) };
      });
      if (done) {
        this.published();
        return done;
      }
    }
    throw new ServiceUnavailableError(`Subscription ${id} kept changing while its periods were billed; retry later`);
  }

  /**
   * Reprices a draft's usage lines with the usage known now and freezes it (its lines never
   * change again), when it was made before its grace window ended; answers the draft to
   * finalize, or undefined when it is no longer a draft.
   */
  async reprice(draft: Invoice, requestId: string): Promise<Invoice | undefined> {
    if (!draft.subscriptionId || !draft.periodStart || !draft.periodEnd || !draft.lines.some((l) => l.priceType === 'USAGE')) return draft;
    const s = await this.subscriptions.byId(this.db, draft.subscriptionId);
    if (!s) return draft;
    const prices = await this.maker.pricesOf(this.db, s);
    if (!needsUsage(prices)) return draft;
    const window = { start: draft.periodStart, end: draft.periodEnd };
    const usage = await this.maker.usage(s, prices, window, requestId);
    const fresh = invoiceLines(prices, { window: wholeWindow(s, window), usage }, null).filter((l) => l.priceType === 'USAGE');
    return this.db.transaction(async (trx) => {
      const locked = await this.invoices.getForUpdate(trx, draft.id);
      if (!locked || locked.status !== 'draft') return undefined;
      if (locked.frozenAt) return locked;
      const kept = locked.lines.filter((l) => l.priceType !== 'USAGE' || !l.priceId);
      const lines = [...fresh, ...kept].sort((a, b) => order(locked, a) - order(locked, b)).map((l, position) => ({ ...l, position }));
      const now = this.clock();
      await this.invoices.replaceLines(trx, locked.id, lines);
      return this.invoices.save(trx, { ...locked, ...totalsOf(lines, 0), lines, frozenAt: now, updatedAt: now });
    });
  }
}

/** Keeps a repriced draft's order: a line goes where the first line of its price was. */
function order(i: Invoice, l: { priceId: string | null; position: number; priceType: string }): number {
  const at = i.lines.findIndex((x) => x.priceId === l.priceId && x.priceType === l.priceType);
  return (at < 0 ? i.lines.length : at) * 1000 + l.position;
}
