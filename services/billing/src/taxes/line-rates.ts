import { EU_MEMBER_STATES } from '@billstream/contracts';

/**
 * Which rates a positive line bears (docs/api/taxes.md#which-rates-a-line-bears), first match wins:
 * an exempt customer → none; a reverse-charge customer, or the EU reverse charge (enabled, the
 * buyer in another member state than the seller, with an `eu_vat` id) → none, reverse charge; the
 * price's rates; the plan's; the customer's; else every active rate of the buyer's address country
 * whose region is empty or the buyer's. A named list counts only for its active rates (an archived
 * rate moves drafts off it); one naming none active falls through to the next. Pure.
 */
export interface RateRef {
  id: string;
  code: string;
  percentage: string;
  country: string | null;
  region: string | null;
  active: boolean;
}

export interface TaxBuyer {
  taxExempt: 'none' | 'exempt' | 'reverse';
  taxIds: ReadonlyArray<{ type: string; value: string }>;
  taxRateIds: readonly string[];
  addressCountry: string | null;
  addressState: string | null;
}

export interface ReverseChargeSetting {
  enabled: boolean;
  sellerCountry: string | null;
}

export type RateSource = 'price' | 'plan' | 'customer' | 'address';

export type LineRates =
  | { kind: 'exempt'; rates: []; reverseCharge: false; exemptReason: 'customer_exempt' }
  | { kind: 'reverse_charge'; rates: []; reverseCharge: true; exemptReason: null }
  | { kind: 'rates'; source: RateSource | null; rates: RateRef[]; reverseCharge: false; exemptReason: null };

const upper = (v: string | null): string | null => (v === null ? null : v.trim().toUpperCase() || null);

/** The EU reverse charge: on, the buyer in an EU member state other than the seller's, with an eu_vat id. */
export function euReverseCharge(buyer: TaxBuyer, setting: ReverseChargeSetting): boolean {
  const country = upper(buyer.addressCountry);
  const seller = upper(setting.sellerCountry);
  if (!setting.enabled || country === null || seller === null) return false;
  return EU_MEMBER_STATES.has(country) && country !== seller && buyer.taxIds.some((t) => t.type === 'eu_vat');
}

export function lineRates(input: {
  buyer: TaxBuyer;
  priceRateIds: readonly string[];
  planRateIds: readonly string[];
  reverseCharge: ReverseChargeSetting;
  /** Every rate of the environment, by id (active and archived). */
  rates: ReadonlyMap<string, RateRef>;
}): LineRates {
  const { buyer, rates } = input;
  if (buyer.taxExempt === 'exempt') return { kind: 'exempt', rates: [], reverseCharge: false, exemptReason: 'customer_exempt' };
  if (buyer.taxExempt === 'reverse' || euReverseCharge(buyer, input.reverseCharge)) return { kind: 'reverse_charge', rates: [], reverseCharge: true, exemptReason: null };
  const named: Array<[RateSource, readonly string[]]> = [['price', input.priceRateIds], ['plan', input.planRateIds], ['customer', buyer.taxRateIds]];
  for (const [source, ids] of named) {
    const active = ids.map((id) => rates.get(id)).filter((r): r is RateRef => r !== undefined && r.active);
    if (active.length > 0) return { kind: 'rates', source, rates: active, reverseCharge: false, exemptReason: null };
  }
  const country = upper(buyer.addressCountry);
  const state = upper(buyer.addressState);
  if (country === null) return { kind: 'rates', source: null, rates: [], reverseCharge: false, exemptReason: null };
  const region = state === null ? null : `${country}-${state}`;
  const byAddress = [...rates.values()].filter((r) => r.active && r.country === country && (r.region === null || r.region === region));
  return { kind: 'rates', source: byAddress.length > 0 ? 'address' : null, rates: byAddress, reverseCharge: false, exemptReason: null };
}
