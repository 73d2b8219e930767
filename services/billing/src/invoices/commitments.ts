import { minorDigits } from '@billstream/contracts';
import type { Conn } from '@billstream/db';
import { newId } from '@billstream/ids';
import { exact, toDecimalString } from '@billstream/money';
import { billingSchedule, prorationFactor } from '../periods';
import { roundMinorUnits } from '@billstream/pricing';
import type { Subscription } from '../subscriptions/domain';
import { billingPeriodOf, priceInvoice, type Invoice, type InvoiceLine } from './domain';
import type { ChargeWindow } from './lines';
import type { InvoiceStore } from './store';

/**
 * The period an invoice closes (cycle, cancel, pause), kept on its draft when the subscription
 * has a commitment: the input of its COMMITMENT_TRUE_UP line (docs/api/billing.md#minimum-commitments, ADR 0042).
 * `window` is the part of the period billed (its start is the period's), `factor` the part of
 * the whole period it ran (12 decimals; absent for a whole period).
 */
export interface Closing {
  commitment: number;
  window: ChargeWindow;
}

/** A draft as the maker makes it: an invoice, with the period it closes when there is a commitment to true up. */
export type DraftInvoice = Invoice & { closing?: Closing };

const ONE = '1.000000000000';

/** The closing of `window` for a subscription with a commitment (none without one, or with 0). */
export function closingOf(s: Subscription, window: ChargeWindow): Closing | undefined {
  return s.commitmentAmount ? { commitment: s.commitmentAmount, window } : undefined;
}

/** round(commitment × factor), half up, once: what the period must bill at least. */
export function commitmentOf(closing: Closing): number {
  const factor = closing.window.factor;
  return factor === undefined || factor === ONE ? closing.commitment : roundMinorUnits(exact(closing.commitment).times(factor));
}

/**
 * The factor of a closed window [start, end) of `s` that a stored draft no longer carries (a
 * reprice): end − start over the whole period holding `start` (the whole calendar period, for
 * a partial first one); absent for a whole period.
 */
export function factorOf(s: Subscription, start: Date, end: Date): string | undefined {
  const period = billingSchedule({
    start: s.billingAnchor ?? s.currentPeriodStart ?? start,
    billingPeriod: s.billingPeriod,
    billingPeriodCount: s.billingPeriodCount,
    billingCycle: s.billingCycle,
    timezone: s.timezone,
  }).periodAt(start);
  const whole = period.proration ? { start: period.proration.wholeStart, end: period.proration.wholeEnd } : period;
  const factor = prorationFactor(end.getTime() - start.getTime(), whole.end.getTime() - whole.start.getTime());
  return factor === ONE ? undefined : factor;
}

const key = (subscriptionId: string, start: Date) => `${subscriptionId}@${start.getTime()}`;

/** The lines of a period's charges: every line of the period but true-ups (negative ones count, docs/api/billing.md#minimum-commitments). */
function chargesOf(lines: InvoiceLine[], start: Date): number {
  return lines.filter((l) => l.lineType !== 'COMMITMENT_TRUE_UP' && billingPeriodOf(l)?.getTime() === start.getTime()).reduce((sum, l) => sum + l.amount, 0);
}

function trueUpLine(i: Invoice, closing: Closing, target: number, charges: number, position: number): InvoiceLine {
  const amount = target - charges;
  const factor = closing.window.factor === ONE ? undefined : closing.window.factor;
  const major = toDecimalString(exact(amount).div(exact(10).pow(minorDigits(i.currency))));
  return {
    id: newId('invoiceLineItem'),
    position,
    priceId: null,
    priceType: 'FIXED',
    meterId: null,
    description: `Minimum commitment true-up: commitment ${target}${factor ? ` (prorated x ${factor})` : ''}, period charges ${charges} (minor units)`,
    quantity: '1',
    unitAmount: major,
    lineType: 'COMMITMENT_TRUE_UP',
    amount,
    offsetAmount: 0,
    discountAmount: 0,
    netAmount: amount,
    creditedAmount: 0,
    prorationFactor: factor ?? null,
    prepaidCreditsApplied: 0,
    periodStart: closing.window.start,
    periodEnd: closing.window.end,
  };
}

/**
 * The drafts with their COMMITMENT_TRUE_UP lines (docs/api/billing.md#minimum-commitments): a draft closing a
 * period adds max(0, round(commitment × factor) − period charges), the charges being its own
 * lines of the period, those of the batch's earlier drafts and those of the subscription's
 * stored invoices not voided (the ADVANCE charge billed at the period's start). No line when
 * it is 0, and a draft left with no line at all is dropped. Call it in the transaction that
 * writes the drafts, under their subscriptions' row locks (`conn` reads the stored invoices).
 */
export async function withTrueUps<T extends DraftInvoice>(conn: Conn, invoices: InvoiceStore, drafts: T[]): Promise<T[]> {
  const closing = drafts.filter((d) => d.closing && d.subscriptionId);
  if (closing.length === 0) return drafts;
  const stored = await invoices.periodCharges(
    conn,
    closing.map((d) => d.subscriptionId!),
    closing.map((d) => d.closing!.window.start),
    drafts.map((d) => d.id),
  );
  const out: T[] = [];
  for (const [at, d] of drafts.entries()) {
    if (!d.closing || !d.subscriptionId) {
      out.push(d);
      continue;
    }
    const start = d.closing.window.start;
    const batch = drafts.slice(0, at + 1).filter((o) => o.subscriptionId === d.subscriptionId);
    const charges = (stored.get(key(d.subscriptionId, start)) ?? 0) + batch.reduce((sum, o) => sum + chargesOf(o.lines, start), 0);
    const target = commitmentOf(d.closing);
    const lines = target > charges ? [...d.lines, trueUpLine(d, d.closing, target, charges, d.lines.length)] : d.lines;
    if (lines.length > 0) out.push(lines === d.lines ? d : { ...d, ...priceInvoice(lines) });
  }
  return out;
}

/**
 * A stored draft's lines with its true-up computed again (a reprice changed its usage): the
 * old true-up line is replaced by one on the new lines, or by none. The factor is the old
 * line's, else the window's in the subscription's schedule.
 */
export async function trueUpAgain(conn: Conn, invoices: InvoiceStore, s: Subscription, draft: Invoice, lines: InvoiceLine[]): Promise<InvoiceLine[]> {
  const kept = lines.filter((l) => l.lineType !== 'COMMITMENT_TRUE_UP');
  if (!s.commitmentAmount || !draft.periodStart || !draft.periodEnd || !CLOSING_REASONS.has(draft.billingReason)) return kept;
  const old = lines.find((l) => l.lineType === 'COMMITMENT_TRUE_UP');
  const factor = old ? (old.prorationFactor ?? undefined) : factorOf(s, draft.periodStart, draft.periodEnd);
  const closing: Closing = { commitment: s.commitmentAmount, window: { start: draft.periodStart, end: draft.periodEnd, factor } };
  const [redone] = await withTrueUps(conn, invoices, [{ ...draft, lines: kept, closing }]);
  return (redone?.lines ?? kept).map((l, position) => ({ ...l, position }));
}

const CLOSING_REASONS = new Set<Invoice['billingReason']>(['SUBSCRIPTION_CYCLE', 'SUBSCRIPTION_CANCEL', 'SUBSCRIPTION_PAUSE']);
