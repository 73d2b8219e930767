import { toDecimalString } from '@billstream/money';
import { statusAt, type Reservation } from './domain';

/** The reservation as clients see it at `now` (responses and event payloads). */
export function reservationView(r: Reservation, now: Date) {
  return {
    id: r.id,
    status: statusAt(r, now),
    customer_id: r.customerId,
    wallet_id: r.walletId,
    currency: r.currency,
    credits_held: toDecimalString(r.creditsHeld),
    credits_committed: r.creditsCommitted && toDecimalString(r.creditsCommitted),
    transaction_id: r.transactionId,
    allow_overage: r.allowOverage,
    expires_at: r.expiresAt.toISOString(),
    idempotency_key: r.idempotencyKey,
    metadata: r.metadata,
    tenant_id: r.tenantId,
    environment_id: r.environmentId,
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
    ended_at: r.endedAt && r.endedAt.toISOString(),
  };
}
