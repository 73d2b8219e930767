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
    credits_held: r.creditsHeld && toDecimalString(r.creditsHeld),
    credits_committed: r.creditsCommitted && toDecimalString(r.creditsCommitted),
    entitlement: r.quota && {
      feature_id: r.quota.featureId,
      feature_lookup_key: r.quota.featureLookupKey,
      meter_id: r.quota.meterId,
      entitlement_ids: r.quota.entitlementIds,
    },
    quantity_held: r.quota && toDecimalString(r.quota.quantityHeld),
    quantity_committed: r.quota?.quantityCommitted ? toDecimalString(r.quota.quantityCommitted) : null,
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
    event_id: r.commitEvent?.event_id ?? null,
    settled_at: r.settledAt && r.settledAt.toISOString(),
  };
}
