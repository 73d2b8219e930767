import { ValidationError } from '@billstream/errors';
import { exact, toDecimalString as decimalString, type Exact } from '@billstream/money';
import type { LineAmount, Tier, TierInfo } from './domain';
import { parseQuantity } from './quantity';
import { toMinorUnits } from './rounding';

/** Tier i holds the units above the previous tier's `upTo` (0 for the first) up to its own, inclusive. */
function tierInfo(tiers: Tier[], index: number): TierInfo {
  // Indexes come from the loops below, inside the array (the console's stricter checks cannot see it).
  const tier = tiers[index] as Tier;
  return {
    index: index + 1,
    from: index === 0 ? '0' : decimalString(exact((tiers[index - 1] as Tier).upTo as string)),
    upTo: tier.upTo === null ? null : decimalString(exact(tier.upTo)),
    unitAmount: decimalString(exact(tier.unitAmount)),
    flatAmount: tier.flatAmount === null ? null : decimalString(exact(tier.flatAmount)),
  };
}

function describe(description: string, info: TierInfo): string {
  const range = info.upTo === null ? `above ${info.from}` : `${info.from} to ${info.upTo}`;
  return `${description} (tier ${info.index}: ${range})`;
}

/** units x unit amount + the tier's flat amount; no usage bills nothing, flat amount included. */
function tierLine(currency: string, tiers: Tier[], index: number, units: Exact, description: string): LineAmount {
  const info = tierInfo(tiers, index);
  const flat = units.isZero() || info.flatAmount === null ? exact(0) : exact(info.flatAmount);
  return {
    quantity: decimalString(units),
    unitAmount: info.unitAmount,
    amount: toMinorUnits(units.times(info.unitAmount).plus(flat), currency),
    description: describe(description, info),
    tier: info,
  };
}

/** Tiers cover every usage: the last one is open-ended (up_to null). */
function assertOpenEnded(tiers: Tier[]): void {
  if (tiers.length === 0 || tiers[tiers.length - 1]?.upTo !== null) {
    throw new ValidationError('tiers must end with a tier whose up_to is null', { field: 'tiers' });
  }
}

/** The index of the tier that holds a usage: the first whose inclusive `upTo` reaches it. */
export function tierIndexFor(tiers: Tier[], usage: Exact): number {
  assertOpenEnded(tiers);
  return tiers.findIndex((t) => t.upTo === null || usage.lte(t.upTo));
}

/** TIERED VOLUME: one line, all units at the unit amount of the tier that holds the total usage. */
export function volumeLine(currency: string, tiers: Tier[], quantity: string, description: string): LineAmount {
  const usage = parseQuantity(quantity);
  return tierLine(currency, tiers, tierIndexFor(tiers, usage), usage, description);
}

/** TIERED SLAB: one line per tier reached, each with the units inside it; no usage: one empty line of tier 1. */
export function slabLines(currency: string, tiers: Tier[], quantity: string, description: string): LineAmount[] {
  assertOpenEnded(tiers);
  const usage = parseQuantity(quantity);
  if (usage.isZero()) return [tierLine(currency, tiers, 0, usage, description)];
  const lines: LineAmount[] = [];
  let below = exact(0);
  for (let i = 0; i < tiers.length && usage.gt(below); i++) {
    const upTo = (tiers[i] as Tier).upTo;
    const top = upTo === null || usage.lte(upTo) ? usage : exact(upTo);
    lines.push(tierLine(currency, tiers, i, top.minus(below), description));
    below = top;
  }
  return lines;
}
