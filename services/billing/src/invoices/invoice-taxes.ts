import type { Scope } from '@billstream/contracts';
import type { Conn } from '@billstream/db';
import { ServiceUnavailableError } from '@billstream/errors';
import type { CustomerStore } from '../customers/store';
import type { BuyerTax, Invoice } from './domain';
import { providerRequestOf, type ProviderRequest } from './provider-taxes';
import { taxed, type InvoiceTaxContext } from './taxed';
import type { PlanStore } from '../plans/store';
import type { Price } from '../prices/domain';
import type { PriceStore } from '../prices/store';
import type { SettingsStore } from '../settings/store';
import { lineRates, type RateRef, type TaxBuyer } from '../taxes/line-rates';
import type { TaxRateStore } from '../taxes/store';

export interface InvoiceTaxesDeps {
  settings: SettingsStore;
  customers: CustomerStore;
  prices: PriceStore;
  plans: PlanStore;
  rates: TaxRateStore;
}

/**
 * Step (6) for every invoice billing prices (docs/api/taxes.md#invoices-bearing-tax): with the
 * settings' `tax.enabled`, each draft's lines bear the rates `lineRates` picks for them (the
 * buyer as billing's copy of the customer knows it, the price's and the plan's lists, the rates
 * of the environment as they are now), taxed by the arithmetic (`taxed`). Off: the drafts as
 * priced (untaxed). Called wherever a draft is priced or priced again (new drafts, previews,
 * reprices), so a later rate or customer change moves drafts only; finalized invoices keep what
 * they bore. With the HTTP provider, each draft is untaxed and `tax_status: pending` here (this
 * may run inside a transaction); `DraftTaxes` asks the provider outside any.
 */
export class InvoiceTaxes {
  constructor(private readonly deps: InvoiceTaxesDeps) {}

  async apply<T extends Invoice>(conn: Conn, drafts: T[]): Promise<T[]> {
    const out = new Map<string, T>();
    for (const { scope, drafts: group } of byScopeOf(drafts).values()) {
      for (const [id, d] of await this.applyIn(conn, scope, group)) out.set(id, d);
    }
    return drafts.map((d) => out.get(d.id) ?? { ...d, taxStatus: 'ok' });
  }

  private async applyIn<T extends Invoice>(conn: Conn, scope: Scope, drafts: T[]): Promise<Map<string, T>> {
    const r = await this.resolve(conn, scope, drafts);
    if (!r) return new Map();
    const out = new Map<string, T>();
    for (const { draft: d, buyer, picks } of r.drafts) {
      if (r.settings.tax.provider === 'HTTP') {
        // The provider is asked outside any transaction (`DraftTaxes`): untaxed and pending until it answered.
        const untaxed = taxed(d, { rounding: r.settings.tax.rounding, buyer, reverseCharge: false, exemptReason: null, lines: new Map() });
        out.set(d.id, d.billingReason === 'CREDIT_PURCHASE' ? untaxed : { ...untaxed, buyerTax: null, taxStatus: 'pending', taxAttempts: d.taxAttempts ?? 0 });
        continue;
      }
      const lines: InvoiceTaxContext['lines'] = new Map(picks.map((p) => [p.id, { behavior: p.behavior, rates: p.picked.rates }]));
      // Exemption and reverse charge are the buyer's, so every line's pick says the same.
      const first = picks[0]?.picked;
      out.set(d.id, taxed(d, { rounding: r.settings.tax.rounding, buyer, reverseCharge: first?.reverseCharge ?? false, exemptReason: first?.exemptReason ?? null, lines }));
    }
    return out;
  }

  /**
   * What the HTTP provider is asked for each draft of a scope whose settings name it with taxes
   * enabled (docs/api/taxes.md#http-provider): the request, where to and with which secret, and
   * the buyer it is taxed for. Drafts of other scopes, and purchases of credits, are left out.
   */
  async providerRequests<T extends Invoice>(conn: Conn, drafts: T[]): Promise<Array<{ draft: T; request: ProviderRequest; url: string; secret: string; buyer: BuyerTax }>> {
    const out: Array<{ draft: T; request: ProviderRequest; url: string; secret: string; buyer: BuyerTax }> = [];
    for (const { scope, drafts: group } of byScopeOf(drafts).values()) {
      const r = await this.resolve(conn, scope, group);
      if (!r || r.settings.tax.provider !== 'HTTP' || !r.settings.tax.url || !r.settings.tax.secret) continue;
      const s = r.settings.invoiceSettings;
      const seller = { company_name: s?.company_name ?? null, address: s?.address ?? null, country: s?.country ?? null, tax_id: s?.tax_id ?? null };
      for (const { draft, buyer, address, picks } of r.drafts) {
        const request = providerRequestOf(draft, seller, { address, tax_ids: buyer.taxIds, tax_exempt: buyer.taxExempt }, new Map(picks.map((p) => [p.id, { behavior: p.behavior }])));
        if (request) out.push({ draft, request, url: r.settings.tax.url, secret: r.settings.tax.secret, buyer });
      }
    }
    return out;
  }

  /** The settings of a scope with taxes enabled and, per draft, its buyer and each line's behavior and picked rates (undefined: taxes off). */
  private async resolve<T extends Invoice>(conn: Conn, scope: Scope, drafts: T[]) {
    const settings = await this.deps.settings.get(conn, scope);
    if (!settings.tax.enabled) return undefined;
    const rates = new Map<string, RateRef>((await this.deps.rates.all(conn, scope)).map((r) => [r.id, r]));
    const customers = await this.deps.customers.getByIds(conn, drafts.map((d) => d.customerId));
    const prices = await this.pricesOf(conn, scope, drafts);
    const plans = await this.deps.plans.taxRateIdsOf(conn, scope, [...prices.values()].map((p) => p.planId));
    const reverseCharge = { enabled: settings.tax.reverse_charge.enabled, sellerCountry: settings.tax.reverse_charge.seller_country };
    return {
      settings,
      drafts: drafts.map((draft) => {
        const customer = customers.get(draft.customerId);
        if (!customer) throw new ServiceUnavailableError(`Customer ${draft.customerId} is not known to billing yet, so its invoice cannot be taxed; retry later`);
        const address = customer.details?.address ?? null;
        const taxBuyer: TaxBuyer = { ...customer.tax, addressCountry: address?.address_country ?? null, addressState: address?.address_state ?? null };
        const planId = draft.lines.map((l) => (l.priceId ? prices.get(l.priceId)?.planId : undefined)).find((p) => p !== undefined);
        const picks = draft.lines.map((l) => {
          const price = l.priceId ? prices.get(l.priceId) : undefined;
          const plan = price?.planId ?? planId;
          const picked = lineRates({ buyer: taxBuyer, priceRateIds: price?.taxRateIds ?? [], planRateIds: (plan && plans.get(plan)) || [], reverseCharge, rates });
          return { id: l.id, behavior: price?.taxBehavior ?? settings.tax.default_behavior, picked };
        });
        const buyer: BuyerTax = { taxExempt: taxBuyer.taxExempt, taxIds: [...taxBuyer.taxIds], addressCountry: taxBuyer.addressCountry, addressState: taxBuyer.addressState };
        return { draft, buyer, address, picks };
      }),
    };
  }

  /** The prices of the drafts' lines; an override bears its plan price's rates and behavior when it names none (docs/api/taxes.md#tax-fields-of-customers-plans-and-prices). */
  private async pricesOf(conn: Conn, scope: Scope, drafts: Invoice[]): Promise<Map<string, Price>> {
    const ids = [...new Set(drafts.flatMap((d) => d.lines.map((l) => l.priceId).filter((id): id is string => id !== null)))];
    const found = await this.deps.prices.getMany(conn, scope, ids);
    const parents = new Map((await this.deps.prices.getMany(conn, scope, [...new Set(found.map((p) => p.parentPriceId).filter((id): id is string => id !== null))])).map((p) => [p.id, p]));
    return new Map(
      found.map((p) => {
        const parent = p.parentPriceId ? parents.get(p.parentPriceId) : undefined;
        return [p.id, parent ? { ...p, taxRateIds: p.taxRateIds.length > 0 ? p.taxRateIds : parent.taxRateIds, taxBehavior: p.taxBehavior ?? parent.taxBehavior } : p];
      }),
    );
  }
}

/** Drafts grouped by tenant and environment, in first-seen order. */
function byScopeOf<T extends Invoice>(drafts: T[]): Map<string, { scope: Scope; drafts: T[] }> {
  const byScope = new Map<string, { scope: Scope; drafts: T[] }>();
  for (const d of drafts) {
    const key = JSON.stringify([d.tenantId, d.environmentId]);
    const group = byScope.get(key) ?? { scope: { tenantId: d.tenantId, environmentId: d.environmentId }, drafts: [] };
    group.drafts.push(d);
    byScope.set(key, group);
  }
  return byScope;
}
