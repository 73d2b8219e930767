import type { RESERVATION_STATUSES, UsageEventMessage } from '@billstream/contracts';
import { ValidationError } from '@billstream/errors';
import type { Decimal } from 'decimal.js';

export type ReservationStatus = (typeof RESERVATION_STATUSES)[number];

/** Credits of a PRE_PAID wallet held before the work starts (docs/api/reservations.md, ADR 0068). */
export interface Reservation {
  id: string;
  tenantId: string;
  environmentId: string;
  customerId: string;
  /** A hold of credits: its wallet and currency; null for a hold of an entitlement (`quota`). */
  walletId: string | null;
  currency: string | null;
  /** As stored: `held` stays stored until the commit, the release or the job, whatever the time. */
  status: ReservationStatus;
  /** Null for a hold of an entitlement. */
  creditsHeld: Decimal | null;
  creditsCommitted: Decimal | null;
  /** A hold of a METERED hard-limit entitlement (ADR 0070); null for a hold of credits. */
  quota: QuotaHold | null;
  /** A commit by usage event (ADR 0070): the event sent; the hold counts until `settledAt`. Null for other commits. */
  commitEvent: UsageEventMessage | null;
  /** When the aggregator was first seen to hold the commit's event. */
  eventSeenAt: Date | null;
  /** When the commit's event was counted and the committed hold stopped counting. */
  settledAt: Date | null;
  transactionId: string | null;
  allowOverage: boolean;
  expiresAt: Date;
  idempotencyKey: string;
  requestHash: string;
  metadata: Record<string, string>;
  createdAt: Date;
  updatedAt: Date;
  endedAt: Date | null;
}

/** What a hold of an entitlement holds: the feature as the entitlement check gave it, and the quantity. */
export interface QuotaHold {
  featureId: string;
  featureLookupKey: string;
  /** The customer's external id, as usage events name it. */
  externalCustomerId: string;
  meterId: string;
  entitlementIds: string[];
  quantityHeld: Decimal;
  /** What the commit counted as usage; null until committed. */
  quantityCommitted: Decimal | null;
}

/** A reservation of credits: its wallet, currency and credits are known. */
export type CreditReservation = Reservation & { walletId: string; currency: string; creditsHeld: Decimal; quota: null };

/** What a reservation asks for, mapped from the wire (the customer already resolved to its id). */
export interface ReservationRequest {
  customerId: string;
  currency: string;
  /** Exactly one of the two: credits, or an amount of the currency (÷ the wallet's conversion rate). */
  credits: Decimal | null;
  amount: Decimal | null;
  expiresInSeconds: number;
  allowOverage: boolean;
  idempotencyKey: string;
  metadata: Record<string, string>;
}

/** The status a client sees at `now`: a hold past `expires_at` is expired even before the job wrote it. */
export function statusAt(r: Pick<Reservation, 'status' | 'expiresAt'>, now: Date): ReservationStatus {
  return r.status === 'held' && r.expiresAt.getTime() <= now.getTime() ? 'expired' : r.status;
}

/** The reservation as a hold of credits; a hold of an entitlement is committed by `quantity` (400 naming `credits`). */
export function creditReservationOf(r: Reservation): CreditReservation {
  if (r.quota || r.walletId === null || r.currency === null || r.creditsHeld === null) {
    throw new ValidationError('This reservation holds quantity of an entitlement: commit it by quantity', { field: 'credits', reservation_id: r.id });
  }
  return r as CreditReservation;
}
