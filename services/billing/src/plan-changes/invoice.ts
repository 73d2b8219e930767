import { minorDigits } from '@billstream/contracts';
import type { Trx } from '@billstream/db';
import { newId } from '@billstream/ids';
import { exact, toDecimalString } from '@billstream/money';
import { billingPeriodOf, type Invoice, type InvoiceLine } from '../invoices/domain';
import { closingOf } from '../invoices/commitments';
import { cutWindow, invoiceLines, partWindow, periodCut, wholeWindow } from '../invoices/lines';
import type { InvoiceMaker } from '../invoices/maker';
import type { InvoiceStore } from '../invoices/store';
import type { UnpaidProration } from '../invoices/unpaid-proration';
import { prorationFactor } from '../periods';
import type { Price } from '../prices/domain';
import { roundMinorUnits } from '@billstream/pricing';
import type { Subscription } from '../subscriptions/domain';

/** The invoice a change makes, prepared before the change's transaction (its usage read), written inside it. */
export interface PreparedChangeInvoice {
  /** Writes the SUBSCRIPTION_UPDATE invoice with its proration credits; null when it bills no line. */
  write(trx: Trx): Promise<Invoice | null>;
}

/**
 * The SUBSCRIPTION_UPDATE invoice of an immediate plan change at `at` inside the period [S, E)
 * (docs/api/plan-changes.md, ADR 0043), s being S or the last change:
 * - the old plan's ARREAR charges of [s, at) (FIXED × (at − s) / (E − S), usage of [s, at));
 * - with prorations, a PRORATION_CREDIT per ADVANCE FIXED line covering [s, E) (billed at the
 *   period start or at the last change) of −min(round(r × f), r), r = amount − discount_amount −
 *   credited_amount, f = (E − at) / (E − s): the time not used, never more than what the line
 *   has left. r is the line's net amount before offsets other lines' credits placed on it (a
 *   credit absorbed by the new plan's line does not lower what that line is worth: else the
 *   next change credits too little, found by the sequence property test); the line's
 *   `credited_amount` takes the credit up to its net amount, so a credit note finds nothing to
 *   give twice;
 * - with prorations, the new plan's ADVANCE FIXED charges × (E − at) / (E − S) for [at, E);
 * - with another billing period the period ends at `at`: a commitment is trued up on [S, at)
 *   prorated, and the new period is billed whole (ADVANCE), prorations or not.
 * The part of a credit not paid yet on the credited line's invoice (its `amount_remaining`, taken
 * line by line in order) is no credit here: a pre-payment credit note on that invoice lowers what
 * is due by it (ADR 0056). What is due holds the tax: a taxed line's note part is the largest
 * whose total (amount plus the tax it returns, docs/api/taxes.md#arithmetic) fits it. Only unused time already paid becomes a PRORATION_CREDIT, so excess
 * credit in the wallet is always money received, and a void of that invoice later has nothing of
 * the change to undo.
 * Lines of [s, E) keep their billing period S (`billing_period_start`): discounts and
 * commitments count it once. The arithmetic then offsets the credits against the charges; what
 * none absorbs is `excess_credit`, credited to the PRE_PAID wallet at finalization.
 */
export class ChangeInvoicer {
  constructor(
    private readonly maker: InvoiceMaker,
    private readonly invoices: InvoiceStore,
    private readonly unpaid?: UnpaidProration,
  ) {}

  async prepare(
    before: Subscription,
    after: Subscription,
    oldPrices: Price[],
    newPrices: Price[],
    at: Date,
    changeId: string,
    prorate: boolean,
    requestId: string,
  ): Promise<PreparedChangeInvoice> {
    const period = { start: before.currentPeriodStart!, end: before.currentPeriodEnd! };
    const arrear = cutWindow(before, at);
    const usage = await this.maker.usage(before, oldPrices, arrear, requestId);
    const newPeriod = after.currentPeriodStart!.getTime() !== period.start.getTime();
    const ahead = newPeriod
      ? wholeWindow(after, { start: after.currentPeriodStart!, end: after.currentPeriodEnd! })
      : prorate && at.getTime() < period.end.getTime()
        ? partWindow(after, period, at, period.end)
        : null;
    const charges = [...invoiceLines(oldPrices, { window: arrear, usage }, null), ...(ahead ? invoiceLines(newPrices, null, ahead) : [])];
    const closing = newPeriod ? closingOf(before, periodCut(before, at)) : undefined;
    return {
      write: async (trx) => {
        const credits = prorate ? await this.credits(trx, before, arrear.start, period.end, at) : [];
        const lines = [...charges, ...credits.map((c) => c.line)].map((l, position) => ({ ...l, position }));
        const made = this.maker.draft(before, 'SUBSCRIPTION_UPDATE', { start: arrear.start, end: at }, lines, at, closing);
        if (!made) return null;
        const written = await this.maker.write(trx, [{ ...made, sequence: changeId }]);
        if (written === 0) return null;
        await this.invoices.addCredited(
          trx,
          credits.filter((c) => c.recorded > 0).map((c) => ({ lineId: c.creditedLineId, amount: c.recorded })),
        );
        return (await this.invoices.getById(trx, made.id)) ?? null;
      },
    };
  }

  /** The PRORATION_CREDIT lines of the ADVANCE lines covering [from, end), read under their invoices' locks. */
  private async credits(trx: Trx, s: Subscription, from: Date, end: Date, at: Date): Promise<Array<{ line: InvoiceLine; creditedLineId: string; recorded: number }>> {
    if (at.getTime() >= end.getTime()) return [];
    const covering = await this.invoices.linesCovering(trx, s.id, from, end);
    const factor = prorationFactor(end.getTime() - at.getTime(), end.getTime() - from.getTime());
    const out: Array<{ line: InvoiceLine; creditedLineId: string; recorded: number }> = [];
    // What each credited invoice still has due (read under its lock), taken by its lines' credits in order.
    const due = new Map<string, { invoice: Invoice; left: number; lines: Array<{ invoiceLineItemId: string; amount: number }> }>();
    for (const l of covering) {
      // What the line is worth after its own discount and the credits given on it; an offset it absorbed
      // (another line's credit, placed on it by the arithmetic) does not lower it.
      const left = l.amount - l.discountAmount - l.creditedAmount;
      if (left <= 0) continue;
      const unused = Math.min(roundMinorUnits(exact(left).times(factor)), left);
      if (unused <= 0) continue;
      const owed = await this.dueOf(trx, due, l.invoiceId);
      // What is due holds the line's tax: the note's part is what its total (amount plus the tax it returns) fits.
      const fit = owed ? this.unpaid!.fitDue(owed.invoice, l.id, Math.min(unused, Math.max(0, l.netAmount - l.creditedAmount)), owed.left) : { amount: 0, total: 0 };
      const lowered = fit.amount;
      if (owed && lowered > 0) {
        owed.left -= fit.total;
        owed.lines.push({ invoiceLineItemId: l.id, amount: lowered });
      }
      const credit = unused - lowered;
      if (credit <= 0) continue;
      const billingPeriod = billingPeriodOf(l);
      out.push({
        creditedLineId: l.id,
        // `credited_amount` takes what the line's net amount can hold: credit notes then find nothing left to give twice.
        recorded: Math.min(credit, Math.max(0, l.netAmount - l.creditedAmount - lowered)),
        line: {
          id: newId('invoiceLineItem'),
          position: 0,
          priceId: l.priceId,
          priceType: 'FIXED',
          meterId: null,
          description: `Unused time on ${l.description} from ${at.toISOString()} (x ${factor} of ${left}${lowered > 0 ? `, ${lowered} of it off the amount due of invoice ${l.invoiceId}` : ''})`,
          quantity: '1',
          unitAmount: toDecimalString(exact(-credit).div(exact(10).pow(minorDigits(s.currency)))),
          lineType: 'PRORATION_CREDIT',
          amount: -credit,
          offsetAmount: 0,
          discountAmount: 0,
          netAmount: 0,
          creditedAmount: 0,
          prorationFactor: factor,
          prepaidCreditsApplied: 0,
          periodStart: at,
          periodEnd: end,
          ...(billingPeriod && billingPeriod.getTime() !== at.getTime() ? { billingPeriodStart: billingPeriod } : {}),
        },
      });
    }
    for (const { invoice, lines } of due.values()) {
      if (lines.length > 0) await this.unpaid!.lowerDue(trx, invoice, lines, `Unused time from ${at.toISOString()} of a plan change of subscription ${s.id}, not paid yet`);
    }
    return out;
  }

  /** The credited invoice and what it still has due, read once per change (its lock is held since `linesCovering`). */
  private async dueOf(
    trx: Trx,
    due: Map<string, { invoice: Invoice; left: number; lines: Array<{ invoiceLineItemId: string; amount: number }> }>,
    invoiceId: string,
  ): Promise<{ invoice: Invoice; left: number; lines: Array<{ invoiceLineItemId: string; amount: number }> } | undefined> {
    if (!this.unpaid) return undefined;
    const known = due.get(invoiceId);
    if (known) return known;
    const invoice = (await this.invoices.getById(trx, invoiceId))!;
    const entry = { invoice, left: await this.unpaid.dueLeft(trx, invoice), lines: [] };
    due.set(invoiceId, entry);
    return entry;
  }
}
