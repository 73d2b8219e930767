import type { RESERVATION_STATUSES } from '@billstream/contracts';
import type { Decimal } from 'decimal.js';

export type ReservationStatus = (typeof RESERVATION_STATUSES)[number];

/** Credits of a PRE_PAID wallet held before the work starts (docs/api/reservations.md, ADR 0068). */
export interface Reservation {
  id: string;
  tenantId: string;
  environmentId: string;
  customerId: string;
  walletId: string;
  currency: string;
  /** As stored: `held` stays stored until the commit, the release or the job, whatever the time. */
  status: ReservationStatus;
  creditsHeld: Decimal;
  creditsCommitted: Decimal | null;
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
