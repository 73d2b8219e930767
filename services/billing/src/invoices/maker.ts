import { TOPICS } from '@billstream/bus';
import type { Conn, Db, Trx } from '@billstream/db';
import { ServiceUnavailableError } from '@billstream/errors';
import { newId } from '@billstream/ids';
import { newDomainEvent, outboxInsertMany, writeOutbox } from '@billstream/outbox';
import type { BillingReason, DomainEvent } from '@billstream/contracts';
import type { InvoiceDiscounts } from '../coupons/discounts';
import type { CustomerStore } from '../customers/store';
import type { Meters, UsageQuery } from '../clients/meters/domain';
import type { DiscountInput } from '../invoice-arithmetic';
import type { Period } from '../periods';
import type { Price } from '../prices/domain';
import type { PriceStore } from '../prices/store';
import { payerOf, type Subscription } from '../subscriptions/domain';
import type { PeriodStep } from '../subscriptions/lifecycle';
import type { SubscriptionStore } from '../subscriptions/store';
import type { InvoiceTaxes } from './invoice-taxes';
import { INVOICE_EVENTS, priceInvoice, type Invoice, type InvoiceEventType, type InvoiceLine } from './domain';
import * as lifecycle from './lifecycle';
import type { OwnedInvoice } from './lifecycle';
import { arrearWindow, cutWindow, invoiceLines, needsUsage, periodCut, wholeWindow, type ChargeWindow, type UsageByPrice } from './lines';
import { closingOf, withTrueUps, type Closing, type DraftInvoice } from './commitments';
import { withThresholdDeductions } from './threshold-deductions';
import type { InvoiceStore } from './store';
import { toInvoiceView } from './view';

export interface MakerDeps {
  db: Db;
  subscriptions: SubscriptionStore;
  prices: PriceStore;
  customers: CustomerStore;
  invoices: InvoiceStore;
  meters: Meters;
  /** Milliseconds a new draft waits before the period job finalizes it. */
  finalizeDelayMs: number;
  /** The subscriptions' discounts (coupons, ADR 0040); none without it. */
  discounts?: InvoiceDiscounts;
  /** Step (6), tax (docs/api/taxes.md#invoices-bearing-tax); untaxed without it. */
  taxes?: InvoiceTaxes;
}

/** An invoice to make, before it is written: the draft and the period it closes (a commitment's true-up). */
export type { DraftInvoice };

/**
 * Makes the draft invoices of a subscription's periods and changes (docs/api/billing.md#invoices):
 * the ARREAR charges of a closed window with its usage read from the aggregator, and the
 * ADVANCE charges of the next one. Reading usage is the only slow part and happens before the
 * caller's transaction; writing is `write`, inside it.
 */
export class InvoiceMaker {
  constructor(private readonly deps: MakerDeps) {}

  /** The prices a subscription bills (fixed at its creation). */
  async pricesOf(conn: Conn, s: Subscription): Promise<Price[]> {
    return this.deps.prices.ofSubscription(conn, s, s.id);
  }

  /** What threshold invoices billed per price in the subscriptions' billing periods (the unbilled usage leaves it out). */
  thresholdBilled(conn: Conn, subscriptionIds: string[], periodStarts: Date[]): Promise<Map<string, Map<string, number>>> {
    return this.deps.invoices.thresholdBilled(conn, subscriptionIds, periodStarts, []);
  }

  /** Prices by id, of the subscription's tenant and environment (a plan change's new prices). */
  pricesByIds(conn: Conn, s: Subscription, ids: string[]): Promise<Price[]> {
    return this.deps.prices.getMany(conn, s, ids);
  }

  /** Each usage price's quantity over a window, from the aggregator. */
  async usage(s: Subscription, prices: Price[], window: ChargeWindow, requestId: string): Promise<UsageByPrice> {
    const out: UsageByPrice = new Map();
    if (!needsUsage(prices) || window.end.getTime() <= window.start.getTime()) return out;
    const customer = await this.deps.customers.getById(this.deps.db, s.customerId);
    if (!customer) throw new ServiceUnavailableError(`Customer ${s.customerId} of subscription ${s.id} is not known to billing yet; retry later`);
    await Promise.all(
      prices
        .filter((p) => p.type === 'USAGE' && p.meterId)
        .map(async (p) => {
          const quantity = await this.deps.meters.usage(
            s,
            p.meterId!,
            { externalCustomerId: customer.externalId, from: window.start, to: window.end, filterValues: p.filterValues },
            requestId,
          );
          out.set(p.id, quantity);
        }),
    );
    return out;
  }

  /**
   * A draft of `lines`, or undefined when there are none to bill. A draft closing a period of a
   * subscription with a commitment (`closing`) is made even without lines: its true-up is
   * decided when it is written (`withTrueUps`), which drops it if it bills nothing.
   */
  draft(s: Subscription, reason: BillingReason, period: Period, lines: InvoiceLine[], now: Date, closing?: Closing): DraftInvoice | undefined {
    if (lines.length === 0 && !closing) return undefined;
    const d = this.build(s, reason, period, lines, now);
    return closing ? { ...d, closing } : d;
  }

  private build(s: Subscription, reason: BillingReason, period: Period, lines: InvoiceLine[], now: Date): DraftInvoice {
    return {
      id: newId('invoice'),
      tenantId: s.tenantId,
      environmentId: s.environmentId,
      // The payer (docs/api/hierarchy-billing.md): an invoicing ancestor, else the subscription's customer.
      customerId: payerOf(s),
      subscriptionId: s.id,
      subscriptionCustomerId: s.customerId,
      billingReason: reason,
      sequence: '',
      sourceKey: null,
      source: null,
      status: 'draft',
      paymentStatus: 'pending',
      currency: s.currency,
      periodStart: period.start,
      periodEnd: period.end,
      paymentTermsDays: s.paymentTermsDays,
      dueDate: null,
      overdue: false,
      ...priceInvoice(lines),
      postPaymentCreditNotesAmount: 0,
      hostedInvoiceUrl: null,
      invoicePdfUrl: null,
      invoiceNumber: null,
      finalizeAfter: new Date(now.getTime() + this.deps.finalizeDelayMs),
      frozenAt: null,
      finalizedAt: null,
      voidedAt: null,
      refundState: null,
      settleState: null,
      version: 1,
      createdAt: now,
      updatedAt: now,
    };
  }

  /** An invoice of nothing (the upcoming invoice of a period that bills no charge). */
  empty(s: Subscription, period: Period, now: Date): DraftInvoice {
    return this.build(s, 'SUBSCRIPTION_CYCLE', period, [], now);
  }

  /** The first billed period's ADVANCE charges (a start, a trial end, a resume). */
  advanceInvoice(s: Subscription, reason: 'SUBSCRIPTION_CREATE' | 'SUBSCRIPTION_RESUME', prices: Price[], now: Date): DraftInvoice | undefined {
    const period = { start: s.currentPeriodStart!, end: s.currentPeriodEnd! };
    return this.draft(s, reason, period, invoiceLines(prices, null, wholeWindow(s, period)), now);
  }

  /**
   * The drafts of steps through ended periods, in order: a closed trial bills nothing and its
   * end starts the first billed period (SUBSCRIPTION_CREATE); a closed period bills its ARREAR
   * charges plus the next period's ADVANCE ones (SUBSCRIPTION_CYCLE), or only the ARREAR ones
   * when the subscription ends with it. `usageOf` gives a closed window's usage (read from the
   * aggregator by default; the period job's batch passes what it read for many at once). A
   * step that applies a pending plan change bills the next period with `switched`, the new
   * plan's prices (docs/api/plan-changes.md), as every later step; the closed window's ARREAR
   * charges count from the last immediate change inside it (`arrearWindow`).
   */
  async forSteps(
    start: Subscription,
    steps: PeriodStep[],
    prices: Price[],
    now: Date,
    requestId: string,
    usageOf: (before: Subscription, window: ChargeWindow, prices: Price[]) => Promise<UsageByPrice> | UsageByPrice = (before, window, billed) =>
      this.usage(before, billed, window, requestId),
    switched?: Price[],
  ): Promise<DraftInvoice[]> {
    const drafts: Array<DraftInvoice | undefined> = [];
    let before = start;
    let billed = prices;
    for (const step of steps) {
      const after = step.subscription;
      const next = step.applied && switched ? switched : billed;
      if (before.status === 'trialing') {
        if (after.status === 'active') drafts.push(this.advanceInvoice(after, 'SUBSCRIPTION_CREATE', next, now));
      } else {
        const window = arrearWindow(before, step.closed);
        const usage = await usageOf(before, window, billed);
        const ahead = after.status === 'active' ? wholeWindow(after, { start: after.currentPeriodStart!, end: after.currentPeriodEnd! }) : null;
        const lines = [...invoiceLines(billed, { window, usage }, null), ...(ahead ? invoiceLines(next, null, ahead) : [])].map((l, position) => ({ ...l, position }));
        drafts.push(this.draft(before, 'SUBSCRIPTION_CYCLE', step.closed, lines, now, closingOf(before, wholeWindow(before, step.closed))));
      }
      before = after;
      billed = next;
    }
    return drafts.filter((d): d is DraftInvoice => d !== undefined);
  }

  /** The prices of many subscriptions, keyed by subscription id (one query). */
  pricesOfMany(conn: Conn, subscriptions: Subscription[]): Promise<Map<string, Price[]>> {
    return this.deps.prices.ofSubscriptions(conn, subscriptions);
  }

  /**
   * The usage of every closed window that the steps of many subscriptions bill, read from the
   * aggregator with one call per tenant and environment (per 1,000 queries), answered as a
   * lookup for `forSteps`. A subscription whose customer billing does not know yet is left out
   * (`missing`): its own `forSteps` reads (and fails) as before.
   */
  async usageOfMany(
    work: Array<{ s: Subscription; steps: PeriodStep[]; prices: Price[] }>,
    requestId: string,
  ): Promise<{ lookup: (s: Subscription, window: ChargeWindow) => UsageByPrice; missing: Set<string> }> {
    const customers = await this.deps.customers.getByIds(
      this.deps.db,
      work.map((w) => w.s.customerId),
    );
    const missing = new Set<string>();
    const found = new Map<string, UsageByPrice>();
    const byScope = new Map<string, { scope: Subscription; queries: Array<UsageQuery & { meterId: string }>; into: Array<{ key: string; priceId: string }> }>();
    for (const { s, steps, prices } of work) {
      const windows = closedWindows(s, steps).filter((w) => needsUsage(prices) && w.window.end.getTime() > w.window.start.getTime());
      if (windows.length === 0) continue;
      const customer = customers.get(s.customerId);
      if (!customer) {
        missing.add(s.id);
        continue;
      }
      const scopeKey = JSON.stringify([s.tenantId, s.environmentId]);
      const group = byScope.get(scopeKey) ?? { scope: s, queries: [], into: [] };
      byScope.set(scopeKey, group);
      for (const { before, window } of windows) {
        const key = usageKey(before, window);
        found.set(key, new Map());
        for (const p of prices) {
          if (p.type !== 'USAGE' || !p.meterId) continue;
          group.queries.push({ meterId: p.meterId, externalCustomerId: customer.externalId, from: window.start, to: window.end, filterValues: p.filterValues });
          group.into.push({ key, priceId: p.id });
        }
      }
    }
    for (const group of byScope.values()) {
      const values = await this.deps.meters.usageMany(group.scope, group.queries, requestId);
      group.into.forEach(({ key, priceId }, i) => found.get(key)!.set(priceId, values[i]!));
    }
    return {
      lookup: (s, window) => found.get(usageKey(s, window)) ?? new Map(),
      missing,
    };
  }

  /**
   * Each subscription's usage over one window of its own, read in one aggregator call per scope
   * and 1000 queries (the threshold checks' batch, ADR 0046); `missing`: those whose customer
   * billing does not know yet (their own `usage` reads, and fails, as before).
   */
  async usageOfWindows(work: Array<{ s: Subscription; prices: Price[]; window: ChargeWindow }>, requestId: string): Promise<{ usage: Map<string, UsageByPrice>; missing: Set<string> }> {
    const customers = await this.deps.customers.getByIds(
      this.deps.db,
      work.map((w) => w.s.customerId),
    );
    const usage = new Map<string, UsageByPrice>();
    const missing = new Set<string>();
    const byScope = new Map<string, { scope: Subscription; queries: Array<UsageQuery & { meterId: string }>; into: Array<{ id: string; priceId: string }> }>();
    for (const { s, prices, window } of work) {
      usage.set(s.id, new Map());
      if (!needsUsage(prices) || window.end.getTime() <= window.start.getTime()) continue;
      const customer = customers.get(s.customerId);
      if (!customer) {
        missing.add(s.id);
        continue;
      }
      const scopeKey = JSON.stringify([s.tenantId, s.environmentId]);
      const group = byScope.get(scopeKey) ?? { scope: s, queries: [], into: [] };
      byScope.set(scopeKey, group);
      for (const p of prices) {
        if (p.type !== 'USAGE' || !p.meterId) continue;
        group.queries.push({ meterId: p.meterId, externalCustomerId: customer.externalId, from: window.start, to: window.end, filterValues: p.filterValues });
        group.into.push({ id: s.id, priceId: p.id });
      }
    }
    for (const group of byScope.values()) {
      for (let at = 0; at < group.queries.length; at += 1000) {
        const values = await this.deps.meters.usageMany(group.scope, group.queries.slice(at, at + 1000), requestId);
        values.forEach((v, i) => {
          const { id, priceId } = group.into[at + i]!;
          usage.get(id)!.set(priceId, v);
        });
      }
    }
    return { usage, missing };
  }

  /**
   * The draft a change makes: a start (active) bills its first period's ADVANCE charges; a
   * pause or an immediate cancel of a running period bills its ARREAR charges up to `now`
   * (FIXED prorated); a resume bills the new period's ADVANCE charges.
   */
  async forChange(before: Subscription, after: Subscription, prices: Price[], now: Date, requestId: string): Promise<DraftInvoice | undefined> {
    if (before.status === 'draft' && after.status === 'active') return this.advanceInvoice(after, 'SUBSCRIPTION_CREATE', prices, now);
    if (before.status === 'paused' && after.status === 'active') return this.advanceInvoice(after, 'SUBSCRIPTION_RESUME', prices, now);
    const cut = before.status === 'active' && (after.status === 'paused' || after.status === 'cancelled');
    if (!cut || before.currentPeriodStart!.getTime() >= now.getTime()) return undefined;
    const window = cutWindow(before, now);
    const usage = await this.usage(before, prices, window, requestId);
    const reason = after.status === 'paused' ? 'SUBSCRIPTION_PAUSE' : 'SUBSCRIPTION_CANCEL';
    const period = periodCut(before, now);
    return this.draft(before, reason, { start: period.start, end: period.end }, invoiceLines(prices, { window, usage }, null), now, closingOf(before, period));
  }

  /**
   * Writes drafts and their `invoice.create.drafted` events; a draft whose key (subscription,
   * period start, reason) is taken is skipped. Answers how many were written.
   */
  async write(trx: Trx, drafts: DraftInvoice[]): Promise<number> {
    const priced = await this.discounted(trx, drafts);
    const written = await this.deps.invoices.insertMany(trx, priced);
    const events = this.draftedEvents(priced, written);
    if (events.length > 0) await outboxInsertMany(trx, TOPICS.billingEvents, events);
    return written.size;
  }

  /**
   * The drafts with their subscriptions' discounts (docs/api/coupons.md), priced again by the
   * arithmetic, then made new drafts by `lifecycle.draft` (what the store inserts): call it in
   * the transaction that writes them, under their subscriptions' row locks, so what earlier
   * invoices took of a discount is known exactly.
   */
  async discounted(trx: Trx, made: DraftInvoice[]): Promise<OwnedInvoice[]> {
    // Threshold deductions (step 2), then commitment true-ups: lines of the closing invoice, discounted like the others (docs/api/billing.md#invoice-arithmetic).
    const drafts = await withTrueUps(trx, this.deps.invoices, await withThresholdDeductions(trx, this.deps.invoices, made));
    const priced = !this.deps.discounts || drafts.length === 0 ? drafts : await this.deps.discounts.forNew(trx, drafts, (d, inputs) => ({ ...d, ...priceInvoice(d.lines, inputs) }));
    // The new drafts' status and money are lifecycle's (ADR 0062): the store inserts only what `draft` returns.
    return (await this.taxed(trx, priced)).map((d) => lifecycle.draft(d).invoice);
  }

  /** Step (6) on priced drafts that are not written (the unbilled usage of the real-time balance, docs/api/taxes.md#unbilled-usage-and-the-real-time-balance). */
  withTax(conn: Conn, drafts: DraftInvoice[]): Promise<DraftInvoice[]> {
    return this.taxed(conn, drafts);
  }

  /** Step (6) on priced drafts (docs/api/taxes.md#invoices-bearing-tax): after discounts, before credits. */
  private taxed(conn: Conn, drafts: DraftInvoice[]): Promise<DraftInvoice[]> {
    return this.deps.taxes && drafts.length > 0 ? this.deps.taxes.apply(conn, drafts) : Promise.resolve(drafts);
  }

  /** A preview (the upcoming invoice) with the discounts a new invoice would take now: nothing is stored or used. */
  async previewDiscounts(made: DraftInvoice): Promise<DraftInvoice | undefined> {
    const [draft] = await withTrueUps(this.deps.db, this.deps.invoices, await withThresholdDeductions(this.deps.db, this.deps.invoices, [made]));
    if (!draft) return draft;
    const priced = this.deps.discounts ? await this.deps.discounts.forPreview(this.deps.db, draft, (d, inputs) => ({ ...d, ...priceInvoice(d.lines, inputs) })) : draft;
    return (await this.taxed(this.deps.db, [priced]))[0];
  }

  /** A stored draft's new lines priced with the discounts it carries, on the same periods (a reprice). */
  async repriced(conn: Conn, draft: DraftInvoice): Promise<DraftInvoice> {
    const price = (d: DraftInvoice, inputs: DiscountInput[]): DraftInvoice => ({ ...d, ...priceInvoice(d.lines, inputs) });
    const priced = this.deps.discounts ? await this.deps.discounts.forRecompute(conn, draft, price) : price(draft, []);
    return (await this.taxed(conn, [priced]))[0]!;
  }

  /** The `invoice.create.drafted` events of the drafts written (to insert with others in one statement). */
  draftedEvents(drafts: Invoice[], written: Set<string>): Array<{ key: string; event: DomainEvent }> {
    return drafts.filter((d) => written.has(d.id)).map((d) => ({ key: d.id, event: invoiceEvent(INVOICE_EVENTS.drafted, d) }));
  }
}

/** The closed windows whose usage the steps' invoices bill (a closed trial bills none), in order. */
function closedWindows(start: Subscription, steps: PeriodStep[]): Array<{ before: Subscription; window: ChargeWindow }> {
  const out: Array<{ before: Subscription; window: ChargeWindow }> = [];
  let before = start;
  for (const step of steps) {
    if (before.status !== 'trialing') out.push({ before, window: arrearWindow(before, step.closed) });
    before = step.subscription;
  }
  return out;
}

function usageKey(s: Subscription, window: ChargeWindow): string {
  return `${s.id}@${window.start.getTime()}-${window.end.getTime()}`;
}

/** Records an invoice event in the outbox, keyed by the invoice id (its events keep their order). */
export async function announceInvoice(trx: Trx, type: InvoiceEventType, i: Invoice, actor = 'system'): Promise<void> {
  await writeOutbox(trx, TOPICS.billingEvents, i.id, invoiceEvent(type, i, actor));
}

/** An invoice event (`payload.invoice` is the invoice as the API shows it), to write keyed by the invoice id. */
export function invoiceEvent(type: InvoiceEventType, i: Invoice, actor = 'system') {
  const ctx = { tenantId: i.tenantId, environmentId: i.environmentId, actor };
  return newDomainEvent(type, ctx, { invoice: toInvoiceView(i) });
}
