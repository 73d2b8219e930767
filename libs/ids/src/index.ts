import { monotonicFactory } from 'ulid';

const next = monotonicFactory();

export const ID_PREFIXES = {
  customer: 'cust_',
  wallet: 'wallet_',
  walletTransaction: 'wtxn_',
  webhookEndpoint: 'we_',
  webhookDelivery: 'whd_',
  event: 'evt_',
  meter: 'meter_',
  apiKey: 'key_',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

/** A new id: the kind's prefix and a monotonic ULID (sortable by creation time). */
export function newId(kind: IdKind): string {
  return ID_PREFIXES[kind] + next();
}

/** A bare ULID, for ids that carry no prefix (generated usage event ids, request ids). */
export function newUlid(): string {
  return next();
}
