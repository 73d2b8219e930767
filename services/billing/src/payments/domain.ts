import type { PaymentMethodType, WebhookEventName } from '@billstream/contracts';

/** A payment of an invoice: OFFLINE, or CREDITS debited from a wallet (by a request, or by a postpaid wallet at finalization). */
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
  createdAt: Date;
  updatedAt: Date;
}

export const PAYMENT_EVENTS = { success: 'payment.success' } as const satisfies Record<string, WebhookEventName>;
