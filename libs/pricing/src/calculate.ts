import { flatFeeLine } from './flat-fee';
import type { LineAmount, UsageCharge } from './domain';
import { packageLine } from './package';
import { slabLines, volumeLine } from './tiered';

/** The lines of a usage price for a quantity, each computed exactly and rounded once to minor units. */
export function usageLines(charge: UsageCharge, quantity: string): LineAmount[] {
  const description = charge.displayName ?? 'Usage';
  switch (charge.billingModel) {
    case 'FLAT_FEE':
      return [flatFeeLine(charge.currency, charge.amount, quantity, description)];
    case 'PACKAGE':
      return [packageLine(charge.currency, charge.amount, charge.package, quantity, description)];
    case 'TIERED':
      return charge.tierMode === 'VOLUME'
        ? [volumeLine(charge.currency, charge.tiers, quantity, description)]
        : slabLines(charge.currency, charge.tiers, quantity, description);
  }
}
