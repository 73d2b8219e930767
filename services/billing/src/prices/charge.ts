import type { UsageCharge } from '@billstream/pricing';
import type { Price } from './domain';

/** How a USAGE price turns a quantity into money, for the calculator. */
export function chargeOf(p: Price): UsageCharge {
  const base = { currency: p.currency, displayName: p.displayName };
  if (p.billingModel === 'TIERED') return { ...base, billingModel: 'TIERED', tierMode: p.tierMode!, tiers: p.tiers! };
  if (p.billingModel === 'PACKAGE') return { ...base, billingModel: 'PACKAGE', amount: p.amount!, package: p.package! };
  return { ...base, billingModel: 'FLAT_FEE', amount: p.amount! };
}


/**
 * The quantity a usage line bills for a meter's value over its window: the value as summed
 * (a SUM meter adds negative values as sent), a negative total billed as 0, so no stored event
 * can make a line, an invoice or a preview impossible (docs/api/usage-events.md, ADR 0057).
 */
export function billedQuantity(value: string): string {
  return value.trim().startsWith('-') ? '0' : value;
}
