import { isDecimalString } from '@billstream/money';
import { sumAmounts, usageLines, type LineAmount, type UsageCharge } from '@billstream/pricing';
import type { Price } from './types';

/**
 * What the tier editor edits: a usage price's model as the person types it (strings, as in the
 * form), never saved. `preview` turns it into the calculator's charge and prices a quantity with
 * `usageLines`, the code billing bills with (libs/pricing), so the preview is the invoice's.
 */
export interface DraftTier {
  upTo: string;
  unitAmount: string;
  flatAmount: string;
}

export interface Draft {
  currency: string;
  displayName: string | null;
  billingModel: Price['billing_model'];
  amount: string;
  packageSize: string;
  packageRound: 'UP' | 'DOWN';
  tierMode: 'VOLUME' | 'SLAB';
  tiers: DraftTier[];
}

export function draftOf(price: Price): Draft {
  return {
    currency: price.currency,
    displayName: price.display_name,
    billingModel: price.billing_model,
    amount: price.amount ?? '0',
    packageSize: price.package?.size ?? '1',
    packageRound: price.package?.round ?? 'UP',
    tierMode: price.tier_mode ?? 'VOLUME',
    tiers: (price.tiers ?? [{ up_to: null, unit_amount: '0', flat_amount: null }]).map((t) => ({ upTo: t.up_to ?? '', unitAmount: t.unit_amount, flatAmount: t.flat_amount ?? '' })),
  };
}

export type Preview = { ok: true; lines: LineAmount[]; total: number } | { ok: false; message: string };

const amountOk = (v: string) => isDecimalString(v) && !v.startsWith('-');

/** The draft as the calculator's charge, or what is wrong with it (named as the form names it). */
export function chargeOf(draft: Draft): UsageCharge | string {
  const base = { currency: draft.currency, displayName: draft.displayName };
  switch (draft.billingModel) {
    case 'FLAT_FEE':
      return amountOk(draft.amount) ? { ...base, billingModel: 'FLAT_FEE', amount: draft.amount } : 'Amount must be a decimal number of 0 or more';
    case 'PACKAGE':
      if (!amountOk(draft.amount)) return 'Amount per package must be a decimal number of 0 or more';
      if (!amountOk(draft.packageSize) || Number(draft.packageSize) <= 0) return 'Package size must be a decimal number above 0';
      return { ...base, billingModel: 'PACKAGE', amount: draft.amount, package: { size: draft.packageSize, round: draft.packageRound } };
    case 'TIERED':
      return tieredCharge(draft, base);
  }
}

function tieredCharge(draft: Draft, base: { currency: string; displayName: string | null }): UsageCharge | string {
  let previous: number | null = null;
  for (const [i, tier] of draft.tiers.entries()) {
    const n = i + 1;
    const last = i === draft.tiers.length - 1;
    if (last && tier.upTo.trim() !== '') return `Tier ${n} is the last: leave its "up to" empty (it holds every unit above)`;
    if (!last) {
      if (!amountOk(tier.upTo)) return `Tier ${n}: "up to" must be a decimal number`;
      const upTo = Number(tier.upTo);
      if (upTo <= 0 || (previous !== null && upTo <= previous)) return `Tier ${n}: "up to" must be above the tier before`;
      previous = upTo;
    }
    if (!amountOk(tier.unitAmount)) return `Tier ${n}: unit amount must be a decimal number of 0 or more`;
    if (tier.flatAmount.trim() !== '' && !amountOk(tier.flatAmount)) return `Tier ${n}: flat amount must be empty or a decimal number of 0 or more`;
  }
  if (draft.tiers.length === 0) return 'Add at least one tier';
  return {
    ...base,
    billingModel: 'TIERED',
    tierMode: draft.tierMode,
    tiers: draft.tiers.map((t, i) => ({ upTo: i === draft.tiers.length - 1 ? null : t.upTo, unitAmount: t.unitAmount, flatAmount: t.flatAmount.trim() === '' ? null : t.flatAmount })),
  };
}

/** The lines and total the calculator bills for `quantity`, or the reason it cannot. */
export function preview(draft: Draft, quantity: string): Preview {
  const charge = chargeOf(draft);
  if (typeof charge === 'string') return { ok: false, message: charge };
  try {
    const lines = usageLines(charge, quantity.trim());
    return { ok: true, lines, total: sumAmounts(lines) };
  } catch (err) {
    return { ok: false, message: err instanceof Error ? err.message : String(err) };
  }
}
