import type { PaymentResponse } from '@billstream/contracts';
import type { Payment } from './domain';

/** The public JSON of a payment: responses and `payload.payment` of its event. */
export function toPaymentView(p: Payment): PaymentResponse {
  return {
    id: p.id,
    invoice_id: p.invoiceId,
    amount: p.amount,
    currency: p.currency,
    payment_method_type: p.paymentMethodType,
    wallet_id: p.walletId,
    reference: p.reference,
    idempotency_key: p.idempotencyKey,
    payment_status: p.paymentStatus,
    provider: p.provider,
    provider_reference: p.providerReference,
    failure_reason: p.failureReason,
    attempt: p.attempt,
    created_at: p.createdAt.toISOString(),
    updated_at: p.updatedAt.toISOString(),
    tenant_id: p.tenantId,
    environment_id: p.environmentId,
  };
}
