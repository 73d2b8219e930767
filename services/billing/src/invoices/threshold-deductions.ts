import type { Conn } from '@billstream/db';
import { newId } from '@billstream/ids';
import type { DraftInvoice } from './commitments';
import { billingPeriodOf, priceInvoice, type InvoiceLine, type ThresholdReturn } from './domain';
import type { InvoiceStore } from './store';

const key = (subscriptionId: string, periodStart: Date) => `${subscriptionId}@${periodStart.getTime()}`;

/** The usage CHARGE lines of a draft, by (billing period, price). */
function usageCharges(lines: InvoiceLine[]): Map<string, { periodStart: Date; priceId: string; amount: number; periodEnd: Date | null }> {
  const out = new Map<string, { periodStart: Date; priceId: string; amount: number; periodEnd: Date | null }>();
  for (const l of lines) {
    const period = billingPeriodOf(l);
    if (l.lineType !== 'CHARGE' || l.priceType !== 'USAGE' || !l.priceId || !period) continue;
    const k = `${period.getTime()}|${l.priceId}`;
    const found = out.get(k) ?? { periodStart: period, priceId: l.priceId, amount: 0, periodEnd: l.periodEnd };
    found.amount += l.amount;
    out.set(k, found);
  }
  return out;
}

/**
 * The drafts with a THRESHOLD_DEDUCTION line per price that threshold invoices of the same
 * billing period already billed (docs/api/thresholds.md, ADR 0046): the closing invoice (cycle,
 * cancel, pause, change) and every later threshold invoice bill the period's usage to date on
 * the full period (tiers priced once) less what was billed before. A deduction is capped at the
 * line's amount (a SUM that fell): on a closing invoice (any but a threshold invoice) what the
 * threshold invoices billed beyond it are its `thresholdReturns`, given back by credit notes once it is finalized. Read under the drafts'
 * subscriptions' locks, in the transaction that writes them; voided threshold invoices do not
 * count (their usage goes to the next invoice). Drafts without such lines are answered as they are.
 */
export async function withThresholdDeductions<T extends DraftInvoice>(conn: Conn, invoices: InvoiceStore, drafts: T[]): Promise<T[]> {
  const candidates = drafts.filter((d) => d.subscriptionId && d.lines.some((l) => l.lineType === 'CHARGE' && l.priceType === 'USAGE' && l.priceId));
  if (candidates.length === 0) return drafts;
  const starts = candidates.flatMap((d) => [...usageCharges(d.lines).values()].map((c) => c.periodStart));
  const billed = await invoices.thresholdBilled(
    conn,
    candidates.map((d) => d.subscriptionId!),
    starts,
    drafts.map((d) => d.id),
  );
  if (billed.size === 0) return drafts;
  return drafts.map((d) => {
    if (!d.subscriptionId) return d;
    const kept = d.lines.filter((l) => l.lineType !== 'THRESHOLD_DEDUCTION');
    const deductions: InvoiceLine[] = [];
    const charges = usageCharges(kept);
    const returns = d.billingReason === 'SUBSCRIPTION_THRESHOLD' ? [] : thresholdReturnsOf(billed, d.subscriptionId, charges);
    for (const c of charges.values()) {
      const before = billed.get(key(d.subscriptionId, c.periodStart))?.get(c.priceId) ?? 0;
      const amount = Math.min(before, c.amount);
      if (amount <= 0) continue;
      deductions.push({
        id: newId('invoiceLineItem'),
        position: 0,
        priceId: c.priceId,
        priceType: 'USAGE',
        meterId: kept.find((l) => l.priceId === c.priceId)?.meterId ?? null,
        description: `Billed on threshold invoices of this period${amount < before ? ` (capped at the usage now: ${before} billed)` : ''}`,
        quantity: '1',
        unitAmount: '0',
        lineType: 'THRESHOLD_DEDUCTION',
        amount: -amount,
        offsetAmount: 0,
        discountAmount: 0,
        netAmount: 0,
        creditedAmount: 0,
        prorationFactor: null,
        prepaidCreditsApplied: 0,
        periodStart: c.periodStart,
        periodEnd: c.periodEnd,
      });
    }
    if (deductions.length === 0 && kept.length === d.lines.length && returns.length === 0 && !d.thresholdReturns?.length) return d;
    const lines = [...kept, ...deductions].map((l, position) => ({ ...l, position }));
    return { ...d, ...priceInvoice(lines), thresholdReturns: returns };
  });
}

/**
 * Per usage price the draft bills (with its billing period): what threshold invoices of that
 * period billed of it beyond its charge now. A price the draft does not bill is another
 * invoice's (a plan change's old prices close on the change's invoice).
 */
function thresholdReturnsOf(billed: Map<string, Map<string, number>>, subscriptionId: string, charges: ReturnType<typeof usageCharges>): ThresholdReturn[] {
  const out: ThresholdReturn[] = [];
  for (const c of charges.values()) {
    const before = billed.get(key(subscriptionId, c.periodStart))?.get(c.priceId) ?? 0;
    const now = Math.max(0, c.amount);
    if (before > now) out.push({ periodStart: c.periodStart.toISOString(), priceId: c.priceId, amount: before - now });
  }
  return out.sort((a, b) => a.periodStart.localeCompare(b.periodStart) || a.priceId.localeCompare(b.priceId));
}
