import type { Invoice } from './domain';

declare const OWNED: unique symbol;

/**
 * An invoice as a transition of `lifecycle.ts` made it (ADR 0062): the only value the store's
 * writes of an invoice's status and money fields take. Only lifecycle.ts imports this file
 * (`billing-invoice-owner` of .dependency-cruiser.cjs), so nothing else can make one.
 */
export type OwnedInvoice = Invoice & { readonly [OWNED]: true };

export function own(i: Invoice): OwnedInvoice {
  return i as OwnedInvoice;
}
