import type { Scope } from '@billstream/contracts';
import { minorDigits } from '@billstream/contracts';
import type { Db } from '@billstream/db';
import { ValidationError } from '@billstream/errors';
import { nextStep } from '../subscriptions/lifecycle';
import { subscriptionNotFound } from '../subscriptions/events';
import type { SubscriptionStore } from '../subscriptions/store';
import type { Wallets } from '../clients/wallets/domain';
import { netLines, settleInvoice, type Invoice } from './domain';
import type { DraftTaxes } from './draft-taxes';
import type { InvoiceMaker } from './maker';

export interface UpcomingInvoicesDeps {
  db: Db;
  subscriptions: SubscriptionStore;
  maker: InvoiceMaker;
  wallets: Wallets;
  clock: () => Date;
  /** The HTTP tax provider asked for the invoice shown when its settings name it (docs/api/taxes.md#http-provider). */
  taxes: Pick<DraftTaxes, 'preview'>;
}

/**
 * The invoice the current period's end would make (docs/api/billing.md#invoices): its ARREAR charges
 * with the usage so far, the next period's ADVANCE charges, and the credits the wallets would
 * apply now (the wallet service's allocation, asked as a dry run). Nothing is stored or debited.
 */
export class UpcomingInvoices {
  private readonly db: Db;
  private readonly subscriptions: SubscriptionStore;
  private readonly maker: InvoiceMaker;
  private readonly wallets: Wallets;
  private readonly clock: () => Date;
  private readonly taxes: Pick<DraftTaxes, 'preview'>;

  constructor(deps: UpcomingInvoicesDeps) {
    ({ db: this.db, subscriptions: this.subscriptions, maker: this.maker, wallets: this.wallets, clock: this.clock, taxes: this.taxes } = deps);
  }

  async of(scope: Scope, id: string, requestId: string): Promise<Invoice & { asOf: Date }> {
    const s = await this.subscriptions.get(this.db, scope, id);
    if (!s) throw subscriptionNotFound(id);
    if ((s.status !== 'active' && s.status !== 'trialing') || !s.currentPeriodEnd) {
      throw new ValidationError(`Subscription ${id} is ${s.status}: it has no upcoming invoice`, { field: 'status', status: s.status });
    }
    const asOf = this.clock();
    const step = nextStep(s, s.currentPeriodEnd)!;
    const prices = await this.maker.pricesOf(this.db, s);
    // A pending plan change shows the next period on its prices (docs/api/plan-changes.md).
    const switched = step.applied ? await this.maker.pricesByIds(this.db, s, step.applied.priceIds) : undefined;
    const [made] = await this.maker.forSteps(s, [step], prices, asOf, requestId, undefined, switched);
    const discounted = made && (await this.maker.previewDiscounts(made));
    // Outside any transaction: the HTTP provider, when the settings name it, taxes what is shown.
    const draft = discounted && (await this.taxes.preview(discounted));
    if (!draft) {
      const period = { start: s.currentPeriodStart!, end: s.currentPeriodEnd };
      return { ...this.maker.empty(s, period, asOf), asOf };
    }
    if (draft.subtotal === 0) return { ...draft, asOf };
    const estimate = await this.wallets.allocate(
      draft,
      draft.id,
      {
        customer_id: draft.customerId,
        currency: draft.currency,
        exponent: minorDigits(draft.currency),
        lines: netLines(draft),
        dry_run: true,
      },
      requestId,
    );
    const applied = new Map((estimate.prepaid?.lines ?? []).map((l) => [l.id, l.amount]));
    const lines = draft.lines.map((l) => ({ ...l, prepaidCreditsApplied: applied.get(l.id) ?? 0 }));
    return { ...draft, ...settleInvoice(draft, lines, 0), lines, asOf };
  }
}
