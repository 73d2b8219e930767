import type { UsageCharge } from '@billstream/pricing';
import type { Price } from './domain';

/** How a USAGE price turns a quantity into money, for the calculator. */
export function chargeOf(p: Price): UsageCharge {
  const base = { currency: p.currency, displayName: p.displayName };
  if (p.billingModel === 'TIERED') return { ...base, billingModel: 'TIERED', tierMode: p.tierMode!, tiers: p.tiers! };
  if (p.billingModel === 'PACKAGE') return { ...base, billingModel: 'PACKAGE', amount: p.amount!, package: p.package! };
  return { ...base, billingModel: 'FLAT_FEE', amount: p.amount! };
}

