import type { CreatePaymentBody, FailPaymentBody, SucceedPaymentBody } from '@billstream/contracts';
import type { NewPayment, PaymentFailed, PaymentSucceeded } from './domain';

/** `POST /v1/payments`'s body as the service takes it (ADR 0063). */
export function newPaymentOf(b: CreatePaymentBody): NewPayment {
  return {
    invoiceId: b.invoice_id,
    amount: b.amount,
    paymentMethodType: b.payment_method_type,
    ...(b.wallet_id !== undefined ? { walletId: b.wallet_id } : {}),
    ...(b.provider !== undefined ? { provider: b.provider } : {}),
    ...(b.reference !== undefined ? { reference: b.reference } : {}),
    ...(b.idempotency_key !== undefined ? { idempotencyKey: b.idempotency_key } : {}),
  };
}

export function paymentSucceededOf(b: SucceedPaymentBody): PaymentSucceeded {
  return { providerReference: b.provider_reference };
}

export function paymentFailedOf(b: FailPaymentBody): PaymentFailed {
  return { failureReason: b.failure_reason, ...(b.provider_reference !== undefined ? { providerReference: b.provider_reference } : {}) };
}
