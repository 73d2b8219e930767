import type { PaymentMethodType, WebhookEventName } from '@billstream/contracts';

/**
 * A payment of an invoice: OFFLINE, CREDITS debited from a wallet (by a request, or by a
 * postpaid wallet at finalization), or PROVIDER: a processor's, pending until the client's
 * integration settles it (docs/api/billing.md#processor-payments, ADR 0044).
 */
export interface Payment {
  id: string;
  tenantId: string;
  environmentId: string;
  invoiceId: string;
  amount: number;
  currency: string;
  paymentMethodType: PaymentMethodType;
  walletId: string | null;
  walletTransactionId: string | null;
  reference: string | null;
  idempotencyKey: string | null;
  requestHash: string | null;
  paymentStatus: 'pending' | 'succeeded' | 'failed';
  provider: string | null;
  providerReference: string | null;
  failureReason: string | null;
  /** The dunning attempt that made it (1, 2, ...); null for a client's payment. */
  attempt: number | null;
  createdAt: Date;
  updatedAt: Date;
}

export const PAYMENT_EVENTS = {
  created: 'payment.created',
  pending: 'payment.pending',
  updated: 'payment.updated',
  success: 'payment.success',
  failed: 'payment.failed',
} as const satisfies Record<string, WebhookEventName>;
export type PaymentEventType = (typeof PAYMENT_EVENTS)[keyof typeof PAYMENT_EVENTS];

/** A payment as asked (`POST /v1/payments`, or a dunning attempt): the service's input (ADR 0063). */
export interface NewPayment {
  invoiceId: string;
  amount: number;
  paymentMethodType: PaymentMethodType;
  walletId?: string;
  /** The processor of a PROVIDER payment. */
  provider?: string;
  reference?: string;
  idempotencyKey?: string;
}

/** A processor's outcome of a pending PROVIDER payment: succeeded (with its reference) or failed (with its reason). */
export interface PaymentSucceeded {
  providerReference: string;
}
export interface PaymentFailed {
  failureReason: string;
  providerReference?: string;
}
