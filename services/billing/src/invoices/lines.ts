import { newId } from '@billstream/ids';
import { billingSchedule, prorationFactor, type Period } from '../periods';
import type { Price } from '../prices/domain';
import { fixedLine, usageLines, type LineAmount } from '@billstream/pricing';
import type { Subscription } from '../subscriptions/domain';
import { billedQuantity, chargeOf } from '../prices/charge';
import { chargeLine, type InvoiceLine } from './domain';

/** A window lines bill: the period and, for FIXED charges of a part of a period, the factor (12 decimals). */
export interface ChargeWindow {
  start: Date;
  end: Date;
  factor?: string;
  /** The start of the billing period the window is a part of, when it is not its start (a plan change's windows). */
  billingPeriodStart?: Date;
}

/** Usage quantities of a window, by price id (decimal strings from the aggregator). */
export type UsageByPrice = Map<string, string>;

const ONE = '1.000000000000';

function schedule(s: Subscription) {
  return billingSchedule({
    start: s.billingAnchor ?? s.currentPeriodStart!,
    billingPeriod: s.billingPeriod,
    billingPeriodCount: s.billingPeriodCount,
    billingCycle: s.billingCycle,
    timezone: s.timezone,
  });
}

/**
 * The window of a whole period of the subscription: a calendar subscription's partial first
 * period carries its proration (seconds of the part / seconds of the calendar period).
 */
export function wholeWindow(s: Subscription, period: Period): ChargeWindow {
  const first = schedule(s).first();
  if (first.proration && first.start.getTime() === period.start.getTime() && first.end.getTime() === period.end.getTime()) {
    return { start: period.start, end: period.end, factor: first.proration.factor };
  }
  return { start: period.start, end: period.end };
}

/** The length of the current period of `s` starting at `start`, in ms: of the whole calendar period, for a partial first one. */
function wholeLength(s: Subscription, start: Date, end: Date): number {
  const first = schedule(s).first();
  const whole = first.proration && first.start.getTime() === start.getTime() ? { start: first.proration.wholeStart, end: first.proration.wholeEnd } : { start, end };
  return whole.end.getTime() - whole.start.getTime();
}

/** Where the current plan's charges of the period start: the last immediate change inside it, else the period start. */
function segmentStart(s: Subscription, period: Period): Date {
  const at = s.lastChangeAt?.getTime();
  return at !== undefined && at > period.start.getTime() && at < period.end.getTime() ? s.lastChangeAt! : period.start;
}

/** A window [from, to) of the period [start, end) of `s`: FIXED charges bill its share of the whole period. */
export function partWindow(s: Subscription, period: Period, from: Date, to: Date): ChargeWindow {
  const part = Math.max(0, Math.min(to.getTime(), period.end.getTime()) - from.getTime());
  const window: ChargeWindow = { start: from, end: to, factor: prorationFactor(part, wholeLength(s, period.start, period.end)) };
  return from.getTime() === period.start.getTime() ? window : { ...window, billingPeriodStart: period.start };
}

/**
 * The ARREAR window of a closed period: the whole period (`wholeWindow`), or, after an
 * immediate plan change inside it, the part from the change to the end (docs/api/plan-changes.md).
 */
export function arrearWindow(s: Subscription, closed: Period): ChargeWindow {
  const from = segmentStart(s, closed);
  return from.getTime() === closed.start.getTime() ? wholeWindow(s, closed) : partWindow(s, closed, from, closed.end);
}

/**
 * The window of the current period cut short at `at` (a pause or an immediate cancel) that its
 * lines bill, from the last change inside the period (else its start): FIXED charges bill the
 * part's share of the whole period (of the whole calendar period, for a partial first one).
 */
export function cutWindow(s: Subscription, at: Date): ChargeWindow {
  const period = { start: s.currentPeriodStart!, end: s.currentPeriodEnd! };
  return partWindow(s, period, segmentStart(s, period), at);
}

/** The part of the current period up to `at`, from its start: what a period cut short closes (a commitment's true-up). */
export function periodCut(s: Subscription, at: Date): ChargeWindow {
  const period = { start: s.currentPeriodStart!, end: s.currentPeriodEnd! };
  return partWindow(s, period, period.start, at);
}

function toLine(position: number, price: Price, amount: LineAmount, window: ChargeWindow): InvoiceLine {
  return {
    id: newId('invoiceLineItem'),
    position,
    priceId: price.id,
    priceType: price.type,
    meterId: price.meterId,
    description: amount.description,
    quantity: amount.quantity,
    unitAmount: amount.unitAmount,
    ...chargeLine(amount.amount),
    prorationFactor: amount.prorationFactor ?? null,
    prepaidCreditsApplied: 0,
    periodStart: window.start,
    periodEnd: window.end,
    ...(window.billingPeriodStart ? { billingPeriodStart: window.billingPeriodStart } : {}),
  };
}

function fixedAmount(price: Price, window: ChargeWindow): LineAmount {
  const factor = window.factor === undefined || window.factor === ONE ? undefined : window.factor;
  return fixedLine({ currency: price.currency, amount: price.amount!, displayName: price.displayName }, factor);
}

/** Prices in a stable order: the order the plan made them. */
function ordered(prices: Price[]): Price[] {
  return [...prices].sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.id.localeCompare(b.id));
}

/**
 * The lines an invoice bills: ARREAR charges of a closed window (FIXED ARREAR prorated by its
 * factor; USAGE from the quantities, every usage price is billed in arrear), then ADVANCE
 * FIXED charges of the next window. Positions follow that order; it is the order credits pay in.
 */
export function invoiceLines(prices: Price[], arrear: { window: ChargeWindow; usage: UsageByPrice } | null, advance: ChargeWindow | null): InvoiceLine[] {
  const lines: InvoiceLine[] = [];
  const sorted = ordered(prices);
  if (arrear) {
    for (const price of sorted) {
      if (price.type === 'FIXED' && price.invoiceCadence === 'ARREAR') lines.push(toLine(lines.length, price, fixedAmount(price, arrear.window), arrear.window));
      if (price.type === 'USAGE') {
        for (const amount of usageLines(chargeOf(price), billedQuantity(arrear.usage.get(price.id) ?? '0'))) lines.push(toLine(lines.length, price, amount, arrear.window));
      }
    }
  }
  if (advance) {
    for (const price of sorted) {
      if (price.type === 'FIXED' && price.invoiceCadence === 'ADVANCE') lines.push(toLine(lines.length, price, fixedAmount(price, advance), advance));
    }
  }
  return lines;
}

/** Whether a window's usage needs the aggregator (it has usage prices and is not empty). */
export function needsUsage(prices: Price[]): boolean {
  return prices.some((p) => p.type === 'USAGE' && p.meterId);
}
