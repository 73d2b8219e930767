import type { InvoiceLineType } from '@billstream/contracts';
import type { Conn } from '@billstream/db';
import type { DiscountAmount, DiscountInput } from '../invoice-arithmetic';
import { periodsOf, type Coupon, type DiscountState } from './domain';
import type { CouponStore } from './store';

/** An invoice as the discounts see it: its subscription, period, lines and the discounts it carries. */
export interface DiscountedInvoice {
  id: string;
  subscriptionId: string | null;
  periodStart: Date | null;
  lines: ReadonlyArray<{ id: string; lineType: InvoiceLineType; priceId: string | null; periodStart: Date | null; billingPeriodStart?: Date | null }>;
  discounts: readonly DiscountAmount[];
}

/** What one invoice took of one discount, and the billed periods (starts, ms) it covered there. */
interface Use {
  invoiceId: string;
  discountId: string;
  periods: number[];
  amount: number;
  /** FIXED_AMOUNT: what each of `periods` took (null on rows written before migration 021). */
  periodAmounts: number[] | null;
}

/**
 * One input of the arithmetic and the periods it covers: a PERCENTAGE discount is one input
 * over all its periods; a FIXED_AMOUNT one is an input per period, each with what that period
 * has left of amount_off, so no period takes another's allowance (ADR 0040, amendment).
 */
interface Planned {
  input: DiscountInput;
  periods: number[];
}

/**
 * The discounts of invoices (docs/api/coupons.md, ADR 0040), fed to the invoice arithmetic,
 * which spreads them over the lines. A billed period is the period a line bills (its
 * `period_start`): a discount covers the lines of its periods, a REPEATING or ONCE one only
 * its first N periods, FOREVER all. Which periods a discount covered is read from the
 * invoices that carry it (`invoice_discounts.periods`, voided invoices left out), never from
 * a counter, so a retried or repeated period job finds the same answer, and the amounts are
 * stored by the invoice's writer, one per (invoice, discount), replaced on a recompute.
 */
export class InvoiceDiscounts {
  constructor(private readonly coupons: CouponStore) {}

  /** A subscription's discounts in attach order, with the billed periods they covered. */
  async statesOf(conn: Conn, subscriptionId: string): Promise<DiscountState[]> {
    const attached = await this.withOverrides(conn, await this.coupons.discountsOf(conn, subscriptionId));
    const uses = await this.usesOf(
      conn,
      attached.map((a) => a.discount.id),
    );
    return attached.map((a) => ({ ...a, coveredPeriods: new Set(uses.filter((u) => u.discountId === a.discount.id).flatMap((u) => u.periods)) }));
  }

  /**
   * New invoices priced with their subscriptions' discounts (not removed), in the order given:
   * each later invoice of a subscription sees what the earlier ones took. `price` runs the
   * arithmetic. Call it under the subscriptions' row locks (the writers of invoices hold them).
   */
  async forNew<T extends DiscountedInvoice>(conn: Conn, invoices: T[], price: (invoice: T, inputs: DiscountInput[]) => T): Promise<T[]> {
    const bySubscription = new Map<string, T[]>();
    for (const i of invoices) if (i.subscriptionId) bySubscription.set(i.subscriptionId, [...(bySubscription.get(i.subscriptionId) ?? []), i]);
    const priced = new Map<string, T>();
    // One query for the whole batch: most subscriptions have no discount and cost nothing more.
    const attached = await this.withOverrides(
      conn,
      (await this.coupons.discountsOfMany(conn, [...bySubscription.keys()])).filter((a) => !a.discount.removedAt),
    );
    if (attached.length === 0) return invoices;
    const allUses = await this.usesOf(
      conn,
      attached.map((a) => a.discount.id),
    );
    for (const [subscriptionId, of] of bySubscription) {
      const states = attached.filter((a) => a.discount.subscriptionId === subscriptionId);
      if (states.length === 0) continue;
      const ids = new Set(states.map((s) => s.discount.id));
      const uses = allUses.filter((u) => ids.has(u.discountId));
      for (const invoice of of) {
        const planned = plan(invoice, states, uses, null);
        if (planned.length === 0) continue;
        const done = withPeriods(price(invoice, planned.map((p) => p.input)), planned);
        priced.set(invoice.id, done);
        for (const d of done.discounts) {
          uses.push({ invoiceId: done.id, discountId: d.discountId, periods: (d.periods ?? []).map((p) => p.getTime()), amount: d.amount, periodAmounts: d.periodAmounts ?? null });
        }
      }
    }
    return invoices.map((i) => priced.get(i.id) ?? i);
  }

  /**
   * A stored draft recomputed (a reprice): the discounts it carries on the same periods, what
   * other invoices of those periods took left out; `price` runs the arithmetic.
   */
  async forRecompute<T extends DiscountedInvoice>(conn: Conn, invoice: T, price: (invoice: T, inputs: DiscountInput[]) => T): Promise<T> {
    if (!invoice.subscriptionId || invoice.discounts.length === 0) return price(invoice, []);
    const carried = new Map(invoice.discounts.map((d) => [d.discountId, (d.periods ?? []).map((p) => p.getTime())]));
    const states = (await this.statesOf(conn, invoice.subscriptionId)).filter((s) => carried.has(s.discount.id));
    const uses = await this.usesOf(
      conn,
      states.map((s) => s.discount.id),
    );
    const planned = plan(invoice, states, uses, carried);
    return withPeriods(
      price(
        invoice,
        planned.map((p) => p.input),
      ),
      planned,
    );
  }

  /** A preview (the upcoming invoice) priced with its discounts as for a new invoice, nothing stored or used; `price` runs the arithmetic. */
  async forPreview<T extends DiscountedInvoice>(conn: Conn, invoice: T, price: (invoice: T, inputs: DiscountInput[]) => T): Promise<T> {
    if (!invoice.subscriptionId) return invoice;
    const states = (await this.statesOf(conn, invoice.subscriptionId)).filter((s) => !s.discount.removedAt);
    if (states.length === 0) return invoice;
    const uses = await this.usesOf(
      conn,
      states.map((s) => s.discount.id),
    );
    const planned = plan(invoice, states, uses, null);
    return planned.length === 0 ? invoice : withPeriods(price(invoice, planned.map((p) => p.input)), planned);
  }

  /**
   * The discounts with each coupon's `applies_to_price_ids` read for its subscription: a price
   * the subscription bills through an override (ADR 0042) is the override, so a coupon naming a
   * plan's price covers the lines of the subscription's override of it. One query, only when a
   * coupon names prices.
   */
  private async withOverrides<T extends { discount: { subscriptionId: string }; coupon: Coupon }>(conn: Conn, attached: T[]): Promise<T[]> {
    const limited = attached.filter((a) => a.coupon.appliesToPriceIds !== null);
    if (limited.length === 0) return attached;
    const overrides = await this.coupons.overridesOf(
      conn,
      limited.map((a) => a.discount.subscriptionId),
      limited.flatMap((a) => a.coupon.appliesToPriceIds!),
    );
    if (overrides.length === 0) return attached;
    return attached.map((a) => {
      const names = a.coupon.appliesToPriceIds;
      if (names === null) return a;
      const extra = overrides.filter((o) => o.subscriptionId === a.discount.subscriptionId && names.includes(o.parentPriceId)).map((o) => o.id);
      return extra.length === 0 ? a : { ...a, coupon: { ...a.coupon, appliesToPriceIds: [...names, ...extra] } };
    });
  }

  private async usesOf(conn: Conn, discountIds: string[]): Promise<Use[]> {
    const rows = await this.coupons.uses(conn, discountIds);
    return rows.map((r) => {
      const periods = r.periods.map((p) => p.getTime());
      const amounts = r.periodAmounts ?? null;
      const aligned = amounts !== null && amounts.length === periods.length;
      // Sorted by period, each amount kept with its period.
      const order = periods.map((_, i) => i).sort((a, b) => periods[a]! - periods[b]!);
      return {
        invoiceId: r.invoiceId,
        discountId: r.discountId,
        amount: r.amount,
        periods: order.map((i) => periods[i]!),
        periodAmounts: aligned ? order.map((i) => amounts[i]!) : null,
      };
    });
  }
}

/**
 * The priced invoice's discounts, one per discount: the arithmetic answers one amount per
 * input (in input order), so a FIXED_AMOUNT discount's inputs per period are added up, each
 * period's amount kept (`periodAmounts`), and each discount gets the periods it covers.
 */
function withPeriods<T extends DiscountedInvoice>(invoice: T, planned: Planned[]): T {
  const merged = new Map<string, DiscountAmount>();
  invoice.discounts.forEach((d, i) => {
    const p = planned[i];
    const periods = (p?.periods ?? []).map((ms) => new Date(ms));
    const fixed = p?.input.kind === 'FIXED_AMOUNT';
    const found = merged.get(d.discountId);
    if (!found) {
      merged.set(d.discountId, { ...d, periods, ...(fixed ? { periodAmounts: periods.length > 0 ? [d.amount] : [] } : {}) });
      return;
    }
    found.amount += d.amount;
    found.periods = [...(found.periods ?? []), ...periods];
    if (fixed) found.periodAmounts = [...(found.periodAmounts ?? []), d.amount];
  });
  return { ...invoice, discounts: [...merged.values()] };
}

/**
 * Each discount's input for an invoice, in attach order. Its lines: the CHARGE lines (of
 * `applies_to_price_ids` when set; COMMITMENT_TRUE_UP lines only without it) of the periods it
 * covers: those it covered already, then new ones while it has periods left (`carried`: a
 * recompute keeps the periods the invoice already has). PERCENTAGE: one input, the percent;
 * FIXED_AMOUNT: one input per period, on that period's lines, of what the other invoices of
 * the period left of amount_off (docs/api/coupons.md: at most amount_off per period).
 */
function plan(invoice: DiscountedInvoice, states: ReadonlyArray<Pick<DiscountState, 'discount' | 'coupon'>>, uses: Use[], carried: Map<string, number[]> | null): Planned[] {
  const out: Planned[] = [];
  for (const s of states) {
    const others = uses.filter((u) => u.discountId === s.discount.id && u.invoiceId !== invoice.id);
    const covered = new Set(others.flatMap((u) => u.periods));
    const eligible = invoice.lines.filter((l) => covers(s.coupon, l));
    const linePeriods = [...new Set(eligible.map((l) => periodOf(invoice, l)))].sort((a, b) => a - b);
    const limit = periodsOf(s.coupon);
    const periods: number[] = [];
    let count = covered.size;
    for (const p of linePeriods) {
      if (carried) {
        if (carried.get(s.discount.id)!.includes(p)) periods.push(p);
      } else if (covered.has(p)) {
        periods.push(p);
      } else if (limit === null || count < limit) {
        periods.push(p);
        count += 1;
      }
    }
    if (periods.length === 0 && !carried) continue;
    const linesOf = (of: number[]) => eligible.filter((l) => of.includes(periodOf(invoice, l))).map((l) => l.id);
    if (s.coupon.type === 'PERCENTAGE') {
      out.push({ input: { discountId: s.discount.id, kind: 'PERCENTAGE', percent: s.coupon.percentOff!, appliesTo: linesOf(periods) }, periods });
      continue;
    }
    // FIXED_AMOUNT: each period its own input, with what that period has left across the other invoices.
    const used = usedOf(s.coupon.amountOff!, others);
    const remaining = (p: number) => Math.max(0, s.coupon.amountOff! - (used.get(p) ?? 0));
    if (periods.length === 0) out.push({ input: { discountId: s.discount.id, kind: 'FIXED_AMOUNT', remaining: 0, appliesTo: [] }, periods: [] });
    for (const p of periods) out.push({ input: { discountId: s.discount.id, kind: 'FIXED_AMOUNT', remaining: remaining(p), appliesTo: linesOf([p]) }, periods: [p] });
  }
  return out;
}

/**
 * What other invoices took of a FIXED_AMOUNT coupon's amount_off in each billed period: the
 * amount each stored for each period; a row written before migration 021 (no amounts per
 * period) counts against its periods in order, each up to amount_off, its first period first.
 */
function usedOf(amountOff: number, others: Use[]): Map<number, number> {
  const used = new Map<number, number>();
  for (const u of others) {
    if (u.periodAmounts) {
      u.periods.forEach((p, i) => used.set(p, (used.get(p) ?? 0) + u.periodAmounts![i]!));
      continue;
    }
    let amount = u.amount;
    for (const p of u.periods) {
      const take = Math.min(amount, Math.max(0, amountOff - (used.get(p) ?? 0)));
      used.set(p, (used.get(p) ?? 0) + take);
      amount -= take;
    }
  }
  return used;
}

function periodOf(invoice: DiscountedInvoice, line: { periodStart: Date | null; billingPeriodStart?: Date | null }): number {
  return (line.billingPeriodStart ?? line.periodStart ?? invoice.periodStart ?? new Date(0)).getTime();
}

function covers(c: Coupon, line: { lineType: InvoiceLineType; priceId: string | null }): boolean {
  if (line.lineType === 'CHARGE') return c.appliesToPriceIds === null || (line.priceId !== null && c.appliesToPriceIds.includes(line.priceId));
  return line.lineType === 'COMMITMENT_TRUE_UP' && c.appliesToPriceIds === null;
}
