import type { Db } from '@billstream/db';
import type { Logger } from '@billstream/logger';
import { TaxProviderFailure, type HttpTaxProvider } from '../clients/tax-provider/http-tax-provider';
import type { Invoice } from './domain';
import * as lifecycle from './lifecycle';
import type { InvoiceStore } from './store';
import type { InvoiceTaxes } from './invoice-taxes';
import { checkProviderAnswer, providerTaxed } from './provider-taxes';

/**
 * Step (6)'s part of an invoice: what a retax compares. Field by field, in a fixed order: a
 * draft read from its row and the same draft taxed again hold their rates' members in different
 * key orders (the row's mapping and `taxed`'s spread), and a stringified object would tell them
 * apart, so every draft was rewritten at finalization (one transaction each, its lines deleted
 * and inserted again) though its tax had not moved.
 */
export const taxOf = (i: Invoice): string =>
  JSON.stringify([
    i.lines.map((l) => [l.id, l.taxAmount ?? 0, (l.taxes ?? []).map((t) => [t.taxRateId, t.code, t.percentage, t.taxableAmount, t.amount]), l.taxBehavior ?? null]),
    i.totalTax ?? 0,
    i.exclusiveTax ?? 0,
    (i.taxBreakdown ?? []).map((t) => [t.taxRateId, t.code, t.country, t.region, t.percentage, t.taxableAmount, t.amount]),
    i.reverseCharge ?? false,
    i.taxExemptReason ?? null,
    i.buyerTax ? [i.buyerTax.taxExempt, i.buyerTax.taxIds.map((t) => [t.type, t.value]), i.buyerTax.addressCountry, i.buyerTax.addressState] : null,
    i.total,
    i.taxStatus ?? 'ok',
    i.taxAttempts ?? 0,
  ]);

/** The HTTP provider's retry schedule (docs/api/taxes.md#http-provider): base × 2^(n−1) after the n-th failure in a row, at most `maxMs`. */
export interface TaxRetry {
  baseMs: number;
  maxMs: number;
}
export const TAX_RETRY_DEFAULTS: TaxRetry = { baseMs: 60_000, maxMs: 3_600_000 };

/** The wait after the n-th failed call in a row (n ≥ 1). */
export function taxRetryDelayMs(n: number, retry: TaxRetry = TAX_RETRY_DEFAULTS): number {
  return Math.min(retry.baseMs * 2 ** Math.min(Math.max(n - 1, 0), 30), retry.maxMs);
}

/** Provider calls at once from one batch of drafts. */
const PROVIDER_CONCURRENCY = 8;

export interface DraftTaxesDeps {
  db: Db;
  invoices: InvoiceStore;
  taxes: InvoiceTaxes;
  clock: () => Date;
  /** The HTTP tax provider's transport; absent: a draft of a scope naming it fails its tax (never finalized untaxed). */
  provider?: HttpTaxProvider;
  retry?: TaxRetry;
  logger?: Logger;
}

/**
 * Drafts taxed again just before they are finalized (docs/api/taxes.md#invoices-bearing-tax):
 * the rates, their percentages and the buyer's tax identity are taken as they are at
 * finalization, so a later rate or customer change moves drafts only. A draft whose tax did not
 * move is answered as it is (nothing written); one that moved is saved through
 * `lifecycle.retax` under its row lock. One that is no longer a draft, or changed meanwhile, is
 * left out (the finalizer reads it again).
 *
 * With the HTTP provider (docs/api/taxes.md#http-provider, ADR 0071) each draft is POSTed to it
 * first, with no transaction open; the checked answer is then saved in a short one that checks
 * the draft's version did not move meanwhile. A draft the provider failed is left out (so never
 * finalized untaxed) and marked `tax_status: failed`, its period-job claim held off for the
 * backoff of its failures in a row.
 */
export class DraftTaxes {
  constructor(private readonly deps: DraftTaxesDeps) {}

  async again(drafts: Invoice[]): Promise<Invoice[]> {
    if (drafts.length === 0) return drafts;
    const taxed = await this.deps.taxes.apply(this.deps.db, drafts);
    const answered = await this.askProvider(taxed.filter((t) => t.taxStatus === 'pending'));
    const out: Invoice[] = [];
    for (const [i, d] of drafts.entries()) {
      const again = answered.get(d.id) ?? taxed[i]!;
      if (!('id' in again) || again.taxStatus === 'pending') {
        await this.failed(d, 'reason' in again ? again.reason : 'the settings name the HTTP provider without its url and secret');
        continue;
      }
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

  /**
   * The period job's step for a draft claimed while not `tax_status: ok` (docs/api/taxes.md#http-provider):
   * taxed now, with no transaction open, even before its grace window ends. Taxed, its claim is
   * released (its finalization is not held off); failed, `failed` holds it for the backoff.
   * Answers whether it is taxed now.
   */
  async pending(id: string): Promise<boolean> {
    const draft = await this.deps.invoices.getById(this.deps.db, id);
    if (!draft || draft.status !== 'draft') return false;
    const [taxed] = await this.again([draft]);
    if (!taxed || taxed.taxStatus !== 'ok') return false;
    await this.deps.invoices.releaseLease(this.deps.db, id);
    return true;
  }

  /**
   * A draft just written under the HTTP provider (`tax_status: pending`) taxed now, with no
   * transaction open, as the period job's step would ("at draft"): answered taxed and saved, or
   * `failed` (held for the backoff; the period job retries it). Another status: as it is.
   */
  async atDraft(draft: Invoice): Promise<Invoice> {
    if (draft.status !== 'draft' || draft.taxStatus !== 'pending') return draft;
    const [taxed] = await this.again([draft]);
    return taxed ?? (await this.deps.invoices.getById(this.deps.db, draft.id)) ?? draft;
  }

  /**
   * An invoice that is shown but never stored (the upcoming invoice, a plan change's preview)
   * taxed as its draft would be (docs/api/taxes.md#http-provider): when its settings name the
   * HTTP provider (`tax_status: pending`), the provider is asked now, with no transaction open;
   * its answer gives the tax, and a failure answers it untaxed with `tax_status: failed`.
   * Nothing is written.
   */
  async preview<T extends Invoice>(shown: T): Promise<T> {
    if (shown.taxStatus !== 'pending') return shown;
    const answered = (await this.askProvider([shown])).get(shown.id);
    if (answered && 'id' in answered) return { ...shown, ...answered };
    this.deps.logger?.warn('the HTTP tax provider failed for an invoice shown, not stored; it is answered untaxed (tax_status: failed)', { invoice_id: shown.id, reason: answered?.reason ?? 'the settings name the HTTP provider without its url and secret' });
    return { ...shown, taxStatus: 'failed' };
  }

  /** Each pending draft asked of the provider (a few at once): its taxed draft, or why it failed. */
  private async askProvider(pending: Invoice[]): Promise<Map<string, Invoice | { reason: string }>> {
    const out = new Map<string, Invoice | { reason: string }>();
    if (pending.length === 0) return out;
    const asks = await this.deps.taxes.providerRequests(this.deps.db, pending);
    const worker = async () => {
      for (let a = asks.shift(); a !== undefined; a = asks.shift()) {
        try {
          if (!this.deps.provider) throw new TaxProviderFailure('no HTTP tax provider is configured');
          const checked = checkProviderAnswer(a.request, await this.deps.provider.post(a.url, a.secret, JSON.stringify(a.request)));
          if (!checked.ok) throw new TaxProviderFailure(checked.reason);
          out.set(a.draft.id, providerTaxed(a.draft, a.request, checked.lines, a.buyer));
        } catch (err) {
          out.set(a.draft.id, { reason: err instanceof TaxProviderFailure ? err.reason : String(err) });
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(PROVIDER_CONCURRENCY, asks.length) }, worker));
    return out;
  }

  /** Closes the HTTP provider's connections (the service's stop). */
  async close(): Promise<void> {
    await this.deps.provider?.close();
  }

  /** Marks the draft `tax_status: failed` (one statement, only if it is still the draft read) and holds its claim off for the backoff. */
  private async failed(d: Invoice, reason: string): Promise<void> {
    const attempts = (d.taxAttempts ?? 0) + 1;
    const retryAt = new Date(this.deps.clock().getTime() + taxRetryDelayMs(attempts, this.deps.retry));
    await this.deps.invoices.markTaxFailed(this.deps.db, d, attempts, retryAt);
    this.deps.logger?.warn('the HTTP tax provider failed; the draft stays a draft (tax_status: failed) and is retried', { invoice_id: d.id, reason, attempts, retry_at: retryAt.toISOString() });
  }
}
