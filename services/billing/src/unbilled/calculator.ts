import type { Scope, UnbilledUsageBody } from '@billstream/contracts';
import type { Db } from '@billstream/db';
import type { CustomerStore } from '../customers/store';
import type { InvoiceMaker } from '../invoices/maker';
import type { DraftInvoice } from '../invoices/commitments';
import { chargeLine, owedOf } from '../invoices/domain';
import { invoiceLines, arrearWindow, type UsageByPrice } from '../invoices/lines';
import type { Meters, UsageQuery } from '../clients/meters/domain';
import { sumAmounts } from '@billstream/pricing';
import { payerOf, type Subscription } from '../subscriptions/domain';
import type { SubscriptionStore } from '../subscriptions/store';
import type { UnbilledStore } from './store';

/** The aggregator's batch limit (ADR 0014, amendment). */
const MAX_QUERIES = 1000;

export interface UnbilledCalculatorDeps {
  db: Db;
  subscriptions: SubscriptionStore;
  customers: CustomerStore;
  maker: InvoiceMaker;
  store: UnbilledStore;
  meters: Meters;
  clock: () => Date;
}

/**
 * The unbilled usage charges of customers of one scope (ADR 0024), in minor units per currency:
 * the usage lines the current period of each running subscription would bill now (what the
 * upcoming invoice shows: the same prices, windows and calculator), plus the usage lines of
 * draft invoices (ended periods, not finalized: the wallet pays them at finalization). A trial
 * bills no usage. With taxes on, each amount holds the exclusive tax the lines would bear (step
 * (6) of the invoices, through the maker: the same rates, buyer and rounding), so it is what the
 * wallet would pay for them. Subscriptions and drafts are read in one snapshot, so a period closing at
 * that moment counts once, either as the current period or as its draft; usage is read after
 * `asOf`, so it holds at least every event stored by `asOf`.
 */
export class UnbilledCalculator {
  constructor(private readonly deps: UnbilledCalculatorDeps) {}

  async compute(scope: Scope, customerIds: string[], requestId: string): Promise<UnbilledUsageBody> {
    const asOf = this.deps.clock();
    const { running, drafts } = await this.deps.db.transaction(
      async (trx) => ({
        running: (await this.deps.subscriptions.runningPaidBy(trx, scope, customerIds)).filter((s) => s.status === 'active' && s.currentPeriodStart && s.currentPeriodEnd),
        drafts: await this.deps.store.draftUsage(trx, scope, customerIds),
      }),
      { isolationLevel: 'repeatable read' },
    );
    const prices = await this.deps.maker.pricesOfMany(this.deps.db, running);
    // Usage is each subscription's own customer's; the amounts are its payer's (ADR 0047).
    const known = await this.deps.customers.getByIds(this.deps.db, [...new Set(running.flatMap((s) => [s.customerId, payerOf(s)]))]);
    const queries: Array<UsageQuery & { meterId: string }> = [];
    const into: Array<{ subscriptionId: string; priceId: string }> = [];
    for (const s of running) {
      const customer = known.get(s.customerId);
      if (!customer) continue;
      for (const p of prices.get(s.id) ?? []) {
        if (p.type !== 'USAGE' || !p.meterId) continue;
        queries.push({ meterId: p.meterId, externalCustomerId: customer.externalId, from: arrearWindow(s, periodOf(s)).start, to: s.currentPeriodEnd!, filterValues: p.filterValues });
        into.push({ subscriptionId: s.id, priceId: p.id });
      }
    }
    const usage = new Map<string, UsageByPrice>();
    for (let at = 0; at < queries.length; at += MAX_QUERIES) {
      const values = await this.deps.meters.usageMany(scope, queries.slice(at, at + MAX_QUERIES), requestId);
      values.forEach((v, i) => {
        const { subscriptionId, priceId } = into[at + i];
        const of = usage.get(subscriptionId) ?? new Map<string, string>();
        of.set(priceId, v);
        usage.set(subscriptionId, of);
      });
    }
    // customer -> currency -> { open amount, draft invoices }
    const out = new Map<string, Map<string, { amount: number; invoices: Array<{ invoice_id: string; amount: number }> }>>(customerIds.map((id) => [id, new Map()]));
    const entry = (customerId: string, currency: string) => {
      const byCurrency = out.get(customerId)!;
      const found = byCurrency.get(currency) ?? { amount: 0, invoices: [] };
      byCurrency.set(currency, found);
      return found;
    };
    // What threshold invoices already billed of the periods (they are invoices: a draft one is counted below, a finalized one was paid).
    const thresholdBilled = await this.deps.maker.thresholdBilled(
      this.deps.db,
      running.filter((s) => s.usageThresholds.length > 0).map((s) => s.id),
      running.filter((s) => s.usageThresholds.length > 0).map((s) => s.currentPeriodStart!),
    );
    // Each subscription's open usage lines as the usage of a draft of its period, taxed by the invoices' step (6) (docs/api/taxes.md#unbilled-usage-and-the-real-time-balance).
    const open: DraftInvoice[] = [];
    for (const s of running) {
      const of = usage.get(s.id);
      if (!of) continue;
      // From the last plan change inside the period: the usage before it is on the change's invoice (docs/api/plan-changes.md).
      const window = arrearWindow(s, periodOf(s));
      const lines = invoiceLines(prices.get(s.id) ?? [], { window, usage: of }, null).filter((l) => l.priceType === 'USAGE');
      const billed = thresholdBilled.get(`${s.id}@${s.currentPeriodStart!.getTime()}`);
      const left = lines.map((l, position) => ({ ...l, position, ...chargeLine(l.amount - Math.min(Math.max(0, billed?.get(l.priceId!) ?? 0), l.amount)) }));
      if (billed) for (const l of lines) billed.set(l.priceId!, Math.max(0, (billed.get(l.priceId!) ?? 0) - l.amount));
      const at = entry(payerOf(s), s.currency);
      // A payer billing does not know yet cannot be taxed (its invoice would wait for it): its charges count as they stand, the others' round goes on.
      if (!known.has(payerOf(s))) at.amount = sumAmounts([at, ...left]);
      const draft = known.has(payerOf(s)) ? this.deps.maker.draft(s, 'SUBSCRIPTION_CYCLE', periodOf(s), left.filter((l) => l.amount > 0), asOf) : undefined;
      if (draft) open.push(draft);
    }
    for (const d of await this.deps.maker.withTax(this.deps.db, open)) {
      const at = entry(d.customerId, d.currency);
      // What the wallet would pay for the lines: their net and the tax they bear on top (an inclusive line holds its tax).
      at.amount = sumAmounts([at, ...d.lines.map((l) => ({ amount: owedOf(l) }))]);
    }
    for (const d of drafts) if (d.amount > 0) entry(d.customerId, d.currency).invoices.push({ invoice_id: d.invoiceId, amount: d.amount });
    return {
      as_of: asOf.toISOString(),
      customers: [...out].map(([customerId, byCurrency]) => ({
        customer_id: customerId,
        amounts: [...byCurrency].map(([currency, a]) => ({ currency, amount: a.amount, invoices: a.invoices })),
      })),
    };
  }
}

const periodOf = (s: Subscription) => ({ start: s.currentPeriodStart!, end: s.currentPeriodEnd! });
