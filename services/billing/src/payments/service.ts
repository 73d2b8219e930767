import { createHash } from 'node:crypto';
import type { CreatePaymentBody, Scope } from '@billstream/contracts';
import { minorDigits } from '@billstream/contracts';
import type { Db, Trx } from '@billstream/db';
import { IdempotencyConflictError, NotFoundError, ValidationError } from '@billstream/errors';
import { newId } from '@billstream/ids';
import type { Logger } from '@billstream/logger';
import type { Wallets } from '../clients/wallets/domain';
import { INVOICE_EVENTS, paymentStatusOf, type Invoice } from '../invoices/domain';
import { announceInvoice } from '../invoices/maker';
import type { PaidHook } from '../invoices/paid-hook';
import type { Payment } from './domain';
import { announcePayment, type PaymentStore } from './store';
import type { InvoiceStore } from '../invoices/store';

export interface PaymentDeps {
  db: Db;
  invoices: InvoiceStore;
  payments: PaymentStore;
  wallets: Wallets;
  logger: Logger;
  clock: () => Date;
  published: () => void;
  /** What follows an invoice paid in full (an invoiced top-up settles its credit). */
  paid?: PaidHook;
}

function requestHash(body: CreatePaymentBody): string {
  const { idempotency_key: _key, ...rest } = body;
  return createHash('sha256')
    .update(JSON.stringify({ ...rest, wallet_id: rest.wallet_id ?? null, reference: rest.reference ?? null }))
    .digest('hex');
}

/**
 * Payments of finalized invoices (BILLING.md, Payments). OFFLINE records money received
 * elsewhere in one transaction. CREDITS debits a wallet: the payment is first written
 * `pending` (its amount reserved against the invoice, so concurrent payments never pay more
 * than is due), then the wallet debits it (idempotent on the payment id), then the payment
 * and the invoice are recorded; a crash in between leaves a pending payment the period job
 * completes with the same idempotent call. A payment never adds credits to a wallet.
 */
export class PaymentService {
  constructor(private readonly deps: PaymentDeps) {}

  async create(scope: Scope & { actor: string }, body: CreatePaymentBody, requestId: string): Promise<Payment> {
    const hash = requestHash(body);
    if (body.idempotency_key) {
      const earlier = await this.deps.payments.getByIdempotencyKey(this.deps.db, scope, body.idempotency_key);
      if (earlier) return this.replay(earlier, hash, requestId);
    }
    const now = this.deps.clock();
    const payment: Payment = {
      id: newId('payment'),
      tenantId: scope.tenantId,
      environmentId: scope.environmentId,
      invoiceId: body.invoice_id,
      amount: body.amount,
      currency: '',
      paymentMethodType: body.payment_method_type,
      walletId: body.wallet_id ?? null,
      walletTransactionId: null,
      reference: body.reference ?? null,
      idempotencyKey: body.idempotency_key ?? null,
      requestHash: hash,
      paymentStatus: body.payment_method_type === 'OFFLINE' ? 'succeeded' : 'pending',
      createdAt: now,
      updatedAt: now,
    };
    const first = await this.deps.db.transaction(async (trx) => {
      const invoice = await this.payable(trx, scope, body);
      const row = { ...payment, currency: invoice.currency };
      if (!(await this.deps.payments.insert(trx, row))) return { raced: true as const };
      const after = row.paymentStatus === 'succeeded' ? await this.apply(trx, invoice, row, scope.actor) : invoice;
      return { raced: false as const, payment: row, invoice: after };
    });
    if (first.raced) {
      const earlier = await this.deps.payments.getByIdempotencyKey(this.deps.db, scope, body.idempotency_key!);
      return this.replay(earlier!, hash, requestId);
    }
    if (first.payment.paymentStatus === 'succeeded') {
      this.deps.published();
      await this.afterPaid(first.invoice, requestId);
      return first.payment;
    }
    return this.completeCredits(first.payment, first.invoice.customerId, requestId, scope.actor);
  }

  private async replay(earlier: Payment, hash: string, requestId: string): Promise<Payment> {
    if (earlier.requestHash !== hash) {
      throw new IdempotencyConflictError('This idempotency_key was already used with another payment', { field: 'idempotency_key', payment_id: earlier.id });
    }
    if (earlier.paymentStatus !== 'pending') return earlier;
    const invoice = await this.deps.invoices.getById(this.deps.db, earlier.invoiceId);
    return this.completeCredits(earlier, invoice!.customerId, requestId, 'system');
  }

  /**
   * The wallet debit of a pending CREDITS payment, then its record. A refusal of the wallet
   * (too few credits, another customer's wallet, the invoice voided) removes the pending
   * payment and answers the refusal: nothing of the call stays.
   */
  async completeCredits(pending: Payment, customerId: string, requestId: string, actor: string): Promise<Payment> {
    let answer;
    try {
      answer = await this.deps.wallets.pay(
        pending,
        pending.invoiceId,
        {
          payment_id: pending.id,
          wallet_id: pending.walletId!,
          customer_id: customerId,
          currency: pending.currency,
          exponent: minorDigits(pending.currency),
          amount: pending.amount,
        },
        requestId,
      );
    } catch (err) {
      if (err instanceof ValidationError || err instanceof NotFoundError) await this.drop(pending.id);
      throw err;
    }
    if (answer.status === 'voided') {
      await this.drop(pending.id);
      throw new ValidationError(`Invoice ${pending.invoiceId} is voided: it takes no payments`, { field: 'invoice_id', invoice_id: pending.invoiceId });
    }
    const done = await this.deps.db.transaction(async (trx) => {
      const locked = await this.deps.payments.getForUpdate(trx, pending.id);
      if (!locked || locked.paymentStatus !== 'pending') return { payment: locked };
      const invoice = (await this.deps.invoices.getForUpdate(trx, locked.invoiceId))!;
      const now = this.deps.clock();
      const paid = await this.deps.payments.save(trx, { ...locked, paymentStatus: 'succeeded', walletTransactionId: answer.transaction_id ?? null, updatedAt: now });
      // A void that won the race refunded this debit in the wallet; the invoice keeps its totals.
      if (invoice.status === 'finalized') return { payment: paid, invoice: await this.apply(trx, invoice, paid, actor) };
      return { payment: paid };
    });
    this.deps.published();
    if (done.invoice) await this.afterPaid(done.invoice, requestId);
    return done.payment!;
  }

  private async drop(id: string): Promise<void> {
    await this.deps.db.transaction(async (trx) => {
      const locked = await this.deps.payments.getForUpdate(trx, id);
      if (locked?.paymentStatus === 'pending') await trx('payments').where({ id }).delete();
    });
  }

  /**
   * The invoice, locked, if it can take the payment: finalized, at most what is left after
   * pending payments, and never credits for an invoiced top-up (credits never buy credits).
   */
  private async payable(trx: Trx, scope: Scope, { invoice_id: invoiceId, amount, payment_method_type: method }: CreatePaymentBody): Promise<Invoice> {
    const invoice = await this.deps.invoices.getForUpdate(trx, invoiceId);
    if (!invoice || invoice.tenantId !== scope.tenantId || invoice.environmentId !== scope.environmentId) {
      throw new NotFoundError(`Invoice ${invoiceId} not found`, { field: 'invoice_id', invoice_id: invoiceId });
    }
    if (method === 'CREDITS' && invoice.billingReason === 'CREDIT_PURCHASE') {
      throw new ValidationError(`Invoice ${invoiceId} is a purchase of credits: it cannot be paid with credits`, {
        field: 'payment_method_type',
        billing_reason: invoice.billingReason,
      });
    }
    if (invoice.status !== 'finalized') {
      throw new ValidationError(`Invoice ${invoiceId} is ${invoice.status}: only a finalized invoice takes payments`, {
        field: 'invoice_id',
        status: invoice.status,
      });
    }
    const reserved = await this.deps.payments.pendingAmount(trx, invoiceId);
    const left = invoice.amountRemaining - reserved;
    if (amount > left) {
      throw new ValidationError(`The payment is more than the invoice's amount remaining (${left})`, {
        field: 'amount',
        amount_remaining: left,
      });
    }
    return invoice;
  }

  /** Adds a succeeded payment to its invoice, with the events; answers the invoice as saved. */
  private async apply(trx: Trx, invoice: Invoice, payment: Payment, actor: string): Promise<Invoice> {
    const amountPaid = invoice.amountPaid + payment.amount;
    const amountRemaining = invoice.amountDue - amountPaid;
    const saved = await this.deps.invoices.save(trx, {
      ...invoice,
      amountPaid,
      amountRemaining,
      paymentStatus: paymentStatusOf(invoice.amountDue, amountPaid),
      status: amountRemaining === 0 ? 'paid' : invoice.status,
      updatedAt: this.deps.clock(),
    });
    await announcePayment(trx, payment, actor);
    await announceInvoice(trx, INVOICE_EVENTS.payment, saved, actor);
    if (saved.status === 'paid') await this.deps.paid?.inTransaction(trx, saved);
    return saved;
  }

  private async afterPaid(invoice: Invoice, requestId: string): Promise<void> {
    if (invoice.status === 'paid') await this.deps.paid?.afterCommit(invoice, requestId);
  }

  list(scope: Scope, q: { invoiceId?: string; limit: number; offset: number }) {
    return this.deps.payments.list(this.deps.db, scope, q);
  }

  /** The period job: completes CREDITS payments a crash left pending. */
  async completePending(requestId: string, scope?: Scope): Promise<number> {
    let done = 0;
    for (const id of await this.deps.payments.pendingIds(this.deps.db, 100, scope)) {
      const p = await this.deps.payments.getById(this.deps.db, id);
      if (!p || p.paymentStatus !== 'pending') continue;
      const invoice = await this.deps.invoices.getById(this.deps.db, p.invoiceId);
      try {
        await this.completeCredits(p, invoice!.customerId, requestId, 'system');
        done += 1;
      } catch (err) {
        this.deps.logger.warn('a pending CREDITS payment could not be completed yet', { err, payment_id: id });
      }
    }
    return done;
  }
}
