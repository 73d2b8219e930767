import type { Scope } from '@billstream/contracts';
import type { Db } from '@billstream/db';
import type { Logger } from '@billstream/logger';
import { billingPeriodOf, type Invoice, type InvoiceLine } from '../invoices/domain';
import type { InvoiceStore } from '../invoices/store';
import { markThresholdReturned, thresholdInvoicesBilling, thresholdReturnsOwed } from '../invoices/threshold-returns-rows';
import type { CreditNote } from './domain';
import type { CreditNoteIssuer } from './issuer';
import { creditableOf, noteTax, splitAmount } from './money';

const BATCH = 100;

export interface ThresholdReturnNotesDeps {
  db: Db;
  invoices: InvoiceStore;
  issuer: CreditNoteIssuer;
  creditWallet: (note: CreditNote, requestId: string) => Promise<unknown>;
  logger: Logger;
  clock: () => Date;
  published: () => void;
}

/**
 * Gives back what threshold invoices billed beyond the usage the closing invoice found (a SUM
 * that fell; docs/api/thresholds.md, ADR 0046 amended): once the closing invoice is finalized,
 * one credit note per threshold invoice on its usage line of the price, newest first, each up
 * to what the line can still give back (reason OTHER, refund WALLET: money paid returns to the
 * PRE_PAID wallet), written with `threshold_returned_at` under the closing invoice's lock, so
 * once. A threshold invoice still a draft, or credited already, takes nothing (logged). The
 * wallet part is credited after the commit, like any note (`credit_note:{id}`), and retried by
 * the period job while pending.
 */
export class ThresholdReturnNotes {
  private readonly db: Db;
  private readonly invoices: InvoiceStore;
  private readonly issuer: CreditNoteIssuer;
  private readonly creditWallet: (note: CreditNote, requestId: string) => Promise<unknown>;
  private readonly logger: Logger;
  private readonly clock: () => Date;
  private readonly published: () => void;

  constructor(deps: ThresholdReturnNotesDeps) {
    ({ db: this.db, invoices: this.invoices, issuer: this.issuer, creditWallet: this.creditWallet, logger: this.logger, clock: this.clock, published: this.published } = deps);
  }

  /** After a finalization's commit: writes the notes an invoice owes; a failure is logged and left to the period job. */
  async afterCommit(i: Invoice, requestId: string): Promise<void> {
    if (!i.thresholdReturns?.length || i.thresholdReturnedAt || (i.status !== 'finalized' && i.status !== 'paid')) return;
    try {
      await this.returnOf(i.id, requestId);
    } catch (err) {
      this.logger.warn('invoice finalized; the credit notes of what its threshold invoices billed beyond the usage failed and will be retried by the period job', { err, invoice_id: i.id });
    }
  }

  /** The period job: every finalized invoice whose returns are owed (of `scope` when given); answers how many were written. */
  async retryOwed(requestId: string, scope?: Scope): Promise<number> {
    let done = 0;
    for (const id of await thresholdReturnsOwed(this.db, BATCH, scope)) {
      try {
        await this.returnOf(id, requestId);
        done += 1;
      } catch (err) {
        this.logger.warn('threshold returns not written; retried on the next run', { err, invoice_id: id });
      }
    }
    return done;
  }

  private async returnOf(invoiceId: string, requestId: string): Promise<void> {
    const notes = await this.db.transaction(async (trx) => {
      const closing = await this.invoices.lockRow(trx, invoiceId);
      if (!closing || closing.thresholdReturnedAt || !closing.subscriptionId || (closing.status !== 'finalized' && closing.status !== 'paid')) return [];
      const ctx = { tenantId: closing.tenantId, environmentId: closing.environmentId, actor: 'system' };
      const made: CreditNote[] = [];
      for (const r of closing.thresholdReturns ?? []) {
        const periodStart = new Date(r.periodStart);
        let left = r.amount;
        for (const id of await thresholdInvoicesBilling(trx, closing.subscriptionId, periodStart, r.priceId)) {
          if (left <= 0) break;
          const billed = await this.invoices.getForUpdate(trx, id);
          const line = billed?.lines.find((l) => l.lineType === 'CHARGE' && l.priceId === r.priceId && billingPeriodOf(l)?.getTime() === periodStart.getTime());
          if (!billed || !line) continue;
          const money = await this.issuer.moneyOf(trx, billed);
          const cap = Math.max(0, money.dueLeft) + money.walletLeft + money.paidLeft;
          const amount = withinCap(billed, line, Math.min(left, creditableOf(line), cap), cap);
          if (amount <= 0) continue;
          const issued = await this.issuer.issue(trx, ctx, billed, {
            reason: 'OTHER',
            memo: `Usage of price ${r.priceId} fell after this threshold invoice billed it; returned with invoice ${closing.invoiceNumber ?? closing.id}, which closed the period`,
            refund: 'WALLET',
            origin: 'MANUAL',
            idempotencyKey: `threshold-return:${closing.id}:${billed.id}:${r.priceId}`,
            requestHash: null,
            metadata: { closing_invoice_id: closing.id, price_id: r.priceId },
            lines: [{ invoiceLineItemId: line.id, amount }],
            ...splitAmount(noteTax(billed, [{ invoiceLineItemId: line.id, amount }]).total, money, 'WALLET'),
          });
          if (issued) made.push(issued.note);
          left -= amount;
        }
        if (left > 0) {
          this.logger.warn('a threshold return found less to credit than it owes (threshold invoices still drafts or credited already)', { invoice_id: closing.id, price_id: r.priceId, left });
        }
      }
      await markThresholdReturned(trx, closing.id, this.clock());
      return made;
    });
    if (notes.length > 0) this.published();
    for (const note of notes) await this.creditWallet(note, requestId);
  }
}

/**
 * The most of `amount` a note on `line` can take when its total (the amount and the tax it
 * returns, docs/api/taxes.md#arithmetic) must fit in `cap`: an untaxed line's amount as it is.
 */
function withinCap(invoice: Invoice, line: InvoiceLine, amount: number, cap: number): number {
  const total = (a: number) => noteTax(invoice, [{ invoiceLineItemId: line.id, amount: a }]).total;
  if (amount <= 0 || total(amount) <= cap) return amount;
  const owed = line.netAmount + (line.taxBehavior === 'exclusive' ? (line.taxAmount ?? 0) : 0);
  let fits = Math.min(amount, Math.floor((cap * line.netAmount) / Math.max(owed, 1)));
  while (fits > 0 && total(fits) > cap) fits -= 1;
  return fits;
}
