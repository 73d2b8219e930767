import { ValidationError } from '@billstream/errors';
import { newId } from '@billstream/ids';
import type { Price } from '../prices/domain';
import type { Tier } from '@billstream/pricing';

/** An override as asked (docs/api/billing.md#price-overrides): the plan's price and its new amount or tiers. */
export interface PriceOverrideInput {
  priceId: string;
  amount?: string;
  tiers?: Tier[];
}

/** An override as kept on the subscription: the plan's price, the subscription's own price billed instead, and what it changed. */
export interface PriceOverride {
  priceId: string;
  overridePriceId: string;
  amount: string | null;
  tiers: Tier[] | null;
}

const field = (i: number, name: string) => `price_overrides.${i}.${name}`;

/**
 * The prices a new subscription bills with its overrides (ADR 0042): each override is a price
 * of its own, immutable, scoped to the subscription (`subscriptionId`) with its plan's price as
 * `parentPriceId`, a copy of it but for the amount (FLAT_FEE, PACKAGE, FIXED) or the tiers
 * (TIERED). It keeps the parent's `createdAt`, so its lines keep their place on invoices.
 * Refuses, naming the field, an override of a price the subscription does not bill, a second
 * one of a price, and the wrong one of amount and tiers. Pure.
 */
export function withOverrides(
  subscriptionId: string,
  prices: Price[],
  inputs: PriceOverrideInput[],
): { prices: Price[]; made: Price[]; overrides: PriceOverride[] } {
  const byId = new Map(prices.map((p) => [p.id, p]));
  const made = new Map<string, Price>();
  const overrides: PriceOverride[] = [];
  inputs.forEach((o, i) => {
    const parent = byId.get(o.priceId);
    if (!parent) {
      throw new ValidationError(`Price ${o.priceId} is not a price this subscription bills (an active price of its plan, in its currency and billing period)`, {
        field: field(i, 'price_id'),
        price_id: o.priceId,
      });
    }
    if (made.has(parent.id)) throw new ValidationError(`Price ${o.priceId} is overridden a second time: one override per price`, { field: field(i, 'price_id'), price_id: o.priceId });
    const tiered = parent.billingModel === 'TIERED';
    if (tiered && o.tiers === undefined) throw new ValidationError(`Price ${o.priceId} is TIERED: its override takes tiers, not an amount`, { field: field(i, 'tiers') });
    if (!tiered && o.amount === undefined) {
      throw new ValidationError(`Price ${o.priceId} is ${parent.type} ${parent.billingModel}: its override takes an amount, not tiers`, { field: field(i, 'amount') });
    }
    const price: Price = {
      ...parent,
      id: newId('price'),
      amount: tiered ? null : o.amount!,
      tiers: tiered ? o.tiers! : null,
      parentPriceId: parent.id,
      subscriptionId,
      status: 'active',
    };
    made.set(parent.id, price);
    overrides.push({ priceId: parent.id, overridePriceId: price.id, amount: price.amount, tiers: price.tiers });
  });
  return { prices: prices.map((p) => made.get(p.id) ?? p), made: [...made.values()], overrides };
}
