import type { DomainEvent } from '@billstream/contracts';
import type { Trx } from '@billstream/db';
import { newId } from '@billstream/ids';
import type { Invoice } from '../invoices/domain';
import type { PostpaidPayment, PostpaidRecorder } from '../invoices/postpaid-recorder';
import { PAYMENT_EVENTS, type Payment } from './domain';
import { paymentEvent, type PaymentStore } from './store';

/**
 * The CREDITS payment a postpaid wallet makes when an invoice is finalized (the wallet's
 * allocation pays what the credits left): written `succeeded` in the finalization's
 * transaction, with its `payment.created` and `payment.success` events for the finalizer to write after the invoice's.
 */
export class PostpaidPayments implements PostpaidRecorder {
  constructor(private readonly payments: PaymentStore) {}

  async record(trx: Trx, invoice: Invoice, paid: PostpaidPayment, actor: string): Promise<DomainEvent[]> {
    const payment: Payment = {
      id: newId('payment'),
      tenantId: invoice.tenantId,
      environmentId: invoice.environmentId,
      invoiceId: invoice.id,
      amount: paid.amount,
      currency: invoice.currency,
      paymentMethodType: 'CREDITS',
      walletId: paid.walletId,
      walletTransactionId: paid.transactionId,
      reference: null,
      idempotencyKey: null,
      requestHash: null,
      paymentStatus: 'succeeded',
      provider: null,
      providerReference: null,
      failureReason: null,
      attempt: null,
      createdAt: paid.at,
      updatedAt: paid.at,
    };
    await this.payments.insert(trx, payment);
    return [paymentEvent(payment, PAYMENT_EVENTS.created, actor), paymentEvent(payment, PAYMENT_EVENTS.success, actor)];
  }
}
