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
}

/** A discount's inputs for one invoice: the arithmetic's input and the periods it covers there. */
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
        for (const d of done.discounts) uses.push({ invoiceId: done.id, discountId: d.discountId, periods: (d.periods ?? []).map((p) => p.getTime()), amount: d.amount });
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

  /** The discount inputs of a preview (the upcoming invoice): as for a new invoice, nothing stored or used. */
  async forPreview(conn: Conn, invoice: DiscountedInvoice): Promise<DiscountInput[]> {
    if (!invoice.subscriptionId) return [];
    const states = (await this.statesOf(conn, invoice.subscriptionId)).filter((s) => !s.discount.removedAt);
    if (states.length === 0) return [];
    const uses = await this.usesOf(
      conn,
      states.map((s) => s.discount.id),
    );
    return plan(invoice, states, uses, null).map((p) => p.input);
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
    return rows.map((r) => ({ invoiceId: r.invoiceId, discountId: r.discountId, amount: r.amount, periods: r.periods.map((p) => p.getTime()).sort((a, b) => a - b) }));
  }
}

function withPeriods<T extends DiscountedInvoice>(invoice: T, planned: Planned[]): T {
  const periods = new Map(planned.map((p) => [p.input.discountId, p.periods.map((ms) => new Date(ms))]));
  return { ...invoice, discounts: invoice.discounts.map((d) => ({ ...d, periods: periods.get(d.discountId) ?? [] })) };
}

/**
 * Each discount's input for an invoice, in attach order. Its lines: the CHARGE lines (of
 * `applies_to_price_ids` when set; COMMITMENT_TRUE_UP lines only without it) of the periods it
 * covers: those it covered already, then new ones while it has periods left (`carried`: a
 * recompute keeps the periods the invoice already has). PERCENTAGE: the percent;
 * FIXED_AMOUNT: Σ over its periods here of what other invoices left of amount_off.
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
    const appliesTo = eligible.filter((l) => periods.includes(periodOf(invoice, l))).map((l) => l.id);
    const input: DiscountInput =
      s.coupon.type === 'PERCENTAGE'
        ? { discountId: s.discount.id, kind: 'PERCENTAGE', percent: s.coupon.percentOff!, appliesTo }
        : { discountId: s.discount.id, kind: 'FIXED_AMOUNT', remaining: leftOf(s.coupon.amountOff!, others, periods), appliesTo };
    out.push({ input, periods });
  }
  return out;
}

/**
 * What is left of a FIXED_AMOUNT coupon's amount_off in `periods`, after other invoices: an
 * invoice's amount counts against its periods in order, each up to amount_off (its first
 * period first), so no period ever takes more than amount_off.
 */
function leftOf(amountOff: number, others: Use[], periods: number[]): number {
  const used = new Map<number, number>();
  for (const u of others) {
    let amount = u.amount;
    for (const p of u.periods) {
      const take = Math.min(amount, amountOff - (used.get(p) ?? 0));
      used.set(p, (used.get(p) ?? 0) + take);
      amount -= take;
    }
  }
  return periods.reduce((sum, p) => sum + Math.max(0, amountOff - (used.get(p) ?? 0)), 0);
}

function periodOf(invoice: DiscountedInvoice, line: { periodStart: Date | null; billingPeriodStart?: Date | null }): number {
  return (line.billingPeriodStart ?? line.periodStart ?? invoice.periodStart ?? new Date(0)).getTime();
}

function covers(c: Coupon, line: { lineType: InvoiceLineType; priceId: string | null }): boolean {
  if (line.lineType === 'CHARGE') return c.appliesToPriceIds === null || (line.priceId !== null && c.appliesToPriceIds.includes(line.priceId));
  return line.lineType === 'COMMITMENT_TRUE_UP' && c.appliesToPriceIds === null;
}
