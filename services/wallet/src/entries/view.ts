import { toDecimalString } from '@billstream/money';
import type { LedgerEntry } from './domain';

/** A ledger entry as clients see it, a wallet transaction on the wire (responses and event payloads). */
export function entryView(t: LedgerEntry) {
  return {
    id: t.id,
    wallet_id: t.walletId,
    type: t.type,
    transaction_status: t.status,
    credit_amount: toDecimalString(t.creditAmount),
    amount: toDecimalString(t.amount),
    credit_balance_before: toDecimalString(t.creditBalanceBefore),
    credit_balance_after: toDecimalString(t.creditBalanceAfter),
    credits_available: toDecimalString(t.creditsAvailable),
    expiry_date: t.expiryDate ? t.expiryDate.toISOString() : null,
    priority: t.priority,
    transaction_reason: t.reason,
    description: t.description,
    idempotency_key: t.idempotencyKey,
    tenant_id: t.tenantId,
    environment_id: t.environmentId,
    created_at: t.createdAt.toISOString(),
    updated_at: t.updatedAt.toISOString(),
  };
}
export type EntryView = ReturnType<typeof entryView>;
