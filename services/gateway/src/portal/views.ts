import { Exact } from '@billstream/money';

/** A record as the owner answered it, read loosely: the portal checks its customer and drops internal fields. */
export type OwnerRecord = Record<string, unknown> & { id: string };

/** Fields a portal caller is not shown: the seller's internal labels and scoping. */
const HIDDEN = ['tenant_id', 'environment_id', 'metadata', 'available_actions'];

export function clean<T extends Record<string, unknown>>(record: T): T {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record)) if (!HIDDEN.includes(key)) out[key] = value;
  return out as T;
}

/** The record's customer is one the session reaches (a record without a customer field is not). */
export function inScope(ids: Set<string>, record: Record<string, unknown>, field = 'customer_id'): boolean {
  const customer = record[field];
  return typeof customer === 'string' && ids.has(customer);
}

/** What remains of a metered entitlement: its limit less its usage, never below 0; null without a limit or usage. */
export function remainingOf(limit: unknown, usage: unknown): string | null {
  if (typeof limit !== 'string' || typeof usage !== 'string') return null;
  const left = new Exact(limit).minus(usage);
  return (left.isNegative() ? new Exact(0) : left).toFixed();
}
