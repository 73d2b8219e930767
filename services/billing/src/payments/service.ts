import { createHash } from 'node:crypto';
import type { Scope } from '@billstream/contracts';
import { minorDigits } from '@billstream/contracts';
import type { Db, Trx } from '@billstream/db';
import { IdempotencyConflictError, NotFoundError, ValidationError } from '@billstream/errors';
import { newId } from '@billstream/ids';
import type { Logger } from '@billstream/logger';
import type { Wallets } from '../clients/wallets/domain';
import type { Invoice } from '../invoices/domain';
import * as lifecycle from '../invoices/lifecycle';
import { announceInvoice } from '../invoices/maker';
import type { PaidHook } from '../invoices/paid-hook';
import { PAYMENT_EVENTS, type NewPayment, type Payment, type PaymentEventType, type PaymentFailed, type PaymentSucceeded } from './domain';
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

/**
 * What a retry must repeat: the payment but its key. Its form (the request's field names, in the
 * order they are validated in) is the one stored before the mapping of ADR 0063, so a retry
 * across that deploy computes the hash it stored.
 */
function requestHash(p: NewPayment): string {
  const asked = {
    invoice_id: p.invoiceId,
    amount: p.amount,
    payment_method_type: p.paymentMethodType,
    ...(p.walletId !== undefined ? { wallet_id: p.walletId } : {}),
    ...(p.provider !== undefined ? { provider: p.provider } : {}),
    ...(p.reference !== undefined ? { reference: p.reference } : {}),
  };
  return createHash('sha256')
    .update(JSON.stringify({ ...asked, wallet_id: asked.wallet_id ?? null, reference: asked.reference ?? null, provider: asked.provider ?? null }))
    .digest('hex');
}

/**
 * Payments of finalized invoices (docs/api/billing.md#payments). OFFLINE records money received
 * elsewhere in one transaction. CREDITS debits a wallet: the payment is first written
 * `pending` (its amount reserved against the invoice, so concurrent payments never pay more
 * than is due), then the wallet debits it (idempotent on the payment id), then the payment
 * and the invoice are recorded; a crash in between leaves a pending payment the period job
 * completes with the same idempotent call. A payment never adds credits to a wallet.
 */
export class PaymentService {
  constructor(private readonly deps: PaymentDeps) {}

  async create(scope: Scope & { actor: string }, asked: NewPayment, requestId: string, options: { attempt?: number } = {}): Promise<Payment> {
    const hash = requestHash(asked);
    if (asked.idempotencyKey) {
      const earlier = await this.deps.payments.getByIdempotencyKey(this.deps.db, scope, asked.idempotencyKey);
      if (earlier) return this.replay(earlier, hash, requestId);
    }
    const now = this.deps.clock();
    const payment: Payment = {
      id: newId('payment'),
      tenantId: scope.tenantId,
      environmentId: scope.environmentId,
      invoiceId: asked.invoiceId,
      amount: asked.amount,
      currency: '',
      paymentMethodType: asked.paymentMethodType,
      walletId: asked.walletId ?? null,
      walletTransactionId: null,
      reference: asked.reference ?? null,
      idempotencyKey: asked.idempotencyKey ?? null,
      requestHash: hash,
      paymentStatus: asked.paymentMethodType === 'OFFLINE' ? 'succeeded' : 'pending',
      provider: asked.provider ?? null,
      providerReference: null,
      failureReason: null,
      attempt: options.attempt ?? null,
      createdAt: now,
      updatedAt: now,
    };
    const first = await this.deps.db.transaction(async (trx) => {
      const invoice = await this.payable(trx, scope, asked);
      const row = { ...payment, currency: invoice.currency };
      if (!(await this.deps.payments.insert(trx, row))) return { raced: true as const };
      // A processor's payment waits for its outcome: `payment.pending` cues the client's integration to charge.
      if (row.paymentMethodType === 'PROVIDER') await announcePayment(trx, row, [PAYMENT_EVENTS.created, PAYMENT_EVENTS.pending], scope.actor);
      const after = row.paymentStatus === 'succeeded' ? await this.apply(trx, invoice, row, scope.actor, [PAYMENT_EVENTS.created, PAYMENT_EVENTS.success]) : invoice;
      return { raced: false as const, payment: row, invoice: after };
    });
    if (first.raced) {
      const earlier = await this.deps.payments.getByIdempotencyKey(this.deps.db, scope, asked.idempotencyKey!);
      return this.replay(earlier!, hash, requestId);
    }
    if (first.payment.paymentStatus === 'succeeded' || first.payment.paymentMethodType === 'PROVIDER') {
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
    if (earlier.paymentStatus !== 'pending' || earlier.paymentMethodType !== 'CREDITS') return earlier;
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
      if (lifecycle.canPay(invoice)) return { payment: paid, invoice: await this.apply(trx, invoice, paid, actor, [PAYMENT_EVENTS.created, PAYMENT_EVENTS.success]) };
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
  private async payable(trx: Trx, scope: Scope, { invoiceId, amount, paymentMethodType: method }: NewPayment): Promise<Invoice> {
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
    lifecycle.assertCan('pay', invoice);
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

  /** Adds a succeeded payment to its invoice, with the payment's `events` and the invoice's; answers the invoice as saved. */
  private async apply(trx: Trx, invoice: Invoice, payment: Payment, actor: string, events: PaymentEventType[]): Promise<Invoice> {
    const t = lifecycle.applyPayment(invoice, payment.amount, this.deps.clock());
    const saved = await this.deps.invoices.save(trx, t.invoice);
    await announcePayment(trx, payment, events, actor);
    for (const type of t.events) await announceInvoice(trx, type, saved, actor);
    if (saved.status === 'paid') await this.deps.paid?.inTransaction(trx, saved);
    return saved;
  }

  private async afterPaid(invoice: Invoice, requestId: string): Promise<void> {
    if (invoice.status === 'paid') await this.deps.paid?.afterCommit(invoice, requestId);
  }

  /**
   * POST /v1/payments/{id}/succeed: a pending PROVIDER payment succeeded. Under the payment's
   * and the invoice's locks it adds to `amount_paid` (`paid` when none remains; an invoiced
   * top-up settles as with OFFLINE), with `payment.updated`, `payment.success` and
   * `invoice.update.payment`. The same call again answers the payment unchanged; another
   * outcome or reference: 400 `payment_status`. A void that came first keeps the invoice voided:
   * the payment is recorded succeeded (the money is the client's to refund outside).
   */
  async succeed(scope: Scope & { actor: string }, id: string, outcome: PaymentSucceeded, requestId: string): Promise<Payment> {
    const done = await this.settle(scope, id, 'succeeded', outcome.providerReference, null, async (trx, locked, invoice) => {
      const paid = await this.deps.payments.save(trx, { ...locked, paymentStatus: 'succeeded', providerReference: outcome.providerReference, updatedAt: this.deps.clock() });
      if (!lifecycle.canPay(invoice)) {
        await announcePayment(trx, paid, [PAYMENT_EVENTS.updated, PAYMENT_EVENTS.success], scope.actor);
        this.deps.logger.warn('a processor payment succeeded on an invoice that is no longer open; the money is to be refunded outside', { payment_id: id, invoice_id: invoice.id, status: invoice.status });
        return { payment: paid };
      }
      return { payment: paid, invoice: await this.apply(trx, invoice, paid, scope.actor, [PAYMENT_EVENTS.updated, PAYMENT_EVENTS.success]) };
    });
    if (done.invoice) await this.afterPaid(done.invoice, requestId);
    return done.payment;
  }

  /** POST /v1/payments/{id}/fail: a pending PROVIDER payment failed; what it reserved is free again. Repeats as `succeed` does. */
  async fail(scope: Scope & { actor: string }, id: string, outcome: PaymentFailed): Promise<Payment> {
    const done = await this.settle(scope, id, 'failed', outcome.providerReference ?? null, outcome.failureReason, async (trx, locked) => {
      const failed = await this.deps.payments.save(trx, {
        ...locked,
        paymentStatus: 'failed',
        failureReason: outcome.failureReason,
        providerReference: outcome.providerReference ?? locked.providerReference,
        updatedAt: this.deps.clock(),
      });
      await announcePayment(trx, failed, [PAYMENT_EVENTS.updated, PAYMENT_EVENTS.failed], scope.actor);
      return { payment: failed };
    });
    return done.payment;
  }

  /** The settle of a PROVIDER payment under its lock and its invoice's: `write` when pending, else the repeat's answer or 400. */
  private async settle(
    scope: Scope,
    id: string,
    outcome: 'succeeded' | 'failed',
    reference: string | null,
    reason: string | null,
    write: (trx: Trx, locked: Payment, invoice: Invoice) => Promise<{ payment: Payment; invoice?: Invoice }>,
  ): Promise<{ payment: Payment; invoice?: Invoice }> {
    const done = await this.deps.db.transaction(async (trx) => {
      const found = await this.deps.payments.get(trx, scope, id);
      if (!found) throw new NotFoundError(`Payment ${id} not found`, { field: 'id', payment_id: id });
      if (found.paymentMethodType !== 'PROVIDER') {
        throw new ValidationError(`Payment ${id} is ${found.paymentMethodType}: only PROVIDER payments are settled by their processor`, { field: 'payment_method_type', payment_method_type: found.paymentMethodType });
      }
      // The invoice first, then the payment: the order a new payment takes them in.
      const invoice = (await this.deps.invoices.getForUpdate(trx, found.invoiceId))!;
      const locked = (await this.deps.payments.getForUpdate(trx, id))!;
      if (locked.paymentStatus !== 'pending') {
        const same = locked.paymentStatus === outcome && (reference === null || reference === locked.providerReference) && (reason === null || reason === locked.failureReason);
        if (same) return { payment: locked, repeated: true };
        throw new ValidationError(`Payment ${id} is already ${locked.paymentStatus}${locked.providerReference ? ` (${locked.providerReference})` : ''}`, {
          field: 'payment_status',
          payment_status: locked.paymentStatus,
        });
      }
      return { ...(await write(trx, locked, invoice)), repeated: false };
    });
    if (!done.repeated) this.deps.published();
    return done;
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
