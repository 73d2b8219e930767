import type { Db } from '@billstream/db';
import type { Invoice } from './domain';
import * as lifecycle from './lifecycle';
import type { InvoiceStore } from './store';
import type { InvoiceTaxes } from './invoice-taxes';

/** Step (6)'s part of an invoice: what a retax compares. */
const taxOf = (i: Invoice): string =>
  JSON.stringify([i.lines.map((l) => [l.id, l.taxAmount ?? 0, l.taxes ?? [], l.taxBehavior ?? null]), i.totalTax ?? 0, i.exclusiveTax ?? 0, i.taxBreakdown ?? [], i.reverseCharge ?? false, i.taxExemptReason ?? null, i.buyerTax ?? null, i.total]);

/**
 * Drafts taxed again just before they are finalized (docs/api/taxes.md#invoices-bearing-tax):
 * the rates, their percentages and the buyer's tax identity are taken as they are at
 * finalization, so a later rate or customer change moves drafts only. A draft whose tax did not
 * move is answered as it is (nothing written); one that moved is saved through
 * `lifecycle.retax` under its row lock. One that is no longer a draft, or changed meanwhile, is
 * left out (the finalizer reads it again).
 */
export class DraftTaxes {
  constructor(private readonly deps: { db: Db; invoices: InvoiceStore; taxes: InvoiceTaxes; clock: () => Date }) {}

  async again(drafts: Invoice[]): Promise<Invoice[]> {
    if (drafts.length === 0) return drafts;
    const taxed = await this.deps.taxes.apply(this.deps.db, drafts);
    const out: Invoice[] = [];
    for (const [i, d] of drafts.entries()) {
      const again = taxed[i]!;
      if (taxOf(again) === taxOf(d)) {
        out.push(d);
        continue;
      }
      const saved = await this.deps.db.transaction(async (trx) => {
        const locked = await this.deps.invoices.getForUpdate(trx, d.id);
        if (!locked || locked.status !== 'draft' || locked.version !== d.version) return undefined;
        const { invoice } = lifecycle.retax(locked, again, this.deps.clock());
        await this.deps.invoices.replaceLines(trx, invoice);
        return this.deps.invoices.save(trx, invoice);
      });
      if (saved) out.push(saved);
    }
    return out;
  }
}
