/** The pricing calculator's types: what it needs of a price, and the lines it makes. */
export type PriceType = 'FIXED' | 'USAGE';
export type BillingModel = 'FLAT_FEE' | 'PACKAGE' | 'TIERED';
export type TierMode = 'VOLUME' | 'SLAB';
export type PackageRound = 'UP' | 'DOWN';

/** Amounts and quantities are decimal strings in major units; `upTo` is inclusive, null on the last tier. */
export interface Tier {
  upTo: string | null;
  unitAmount: string;
  flatAmount: string | null;
}

export interface PackageSpec {
  size: string;
  round: PackageRound;
}

/** How a usage price turns a quantity into money. */
export type UsageModel =
  | { billingModel: 'FLAT_FEE'; amount: string }
  | { billingModel: 'PACKAGE'; amount: string; package: PackageSpec }
  | { billingModel: 'TIERED'; tierMode: TierMode; tiers: Tier[] };

export type UsageCharge = UsageModel & { currency: string; displayName?: string | null };

export interface FixedCharge {
  currency: string;
  amount: string;
  displayName?: string | null;
}

/** The tier a line bills: 1-based index, the units above `from` up to `upTo` (inclusive). */
export interface TierInfo {
  index: number;
  from: string;
  upTo: string | null;
  unitAmount: string;
  flatAmount: string | null;
}

/** One invoice line's money: exact quantity and unit amount, amount rounded once to minor units. */
export interface LineAmount {
  quantity: string;
  unitAmount: string;
  /** Integer minor units of the currency (cents for usd, yen for jpy, fils for kwd). */
  amount: number;
  /** Only on prorated FIXED lines: 12 decimals, rounded half up. */
  prorationFactor?: string;
  description: string;
  tier?: TierInfo;
}
