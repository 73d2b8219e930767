import { TOPICS } from '@billstream/bus';
import type { Scope } from '@billstream/contracts';
import { pageOf, type Conn, type Trx } from '@billstream/db';
import { newDomainEvent, writeOutbox } from '@billstream/outbox';
import { type Payment, type PaymentEventType } from './domain';
import { toPaymentView } from './view';

interface PaymentRow {
  id: string;
  tenant_id: string;
  environment_id: string;
  invoice_id: string;
  amount: number | string;
  currency: string;
  payment_method_type: Payment['paymentMethodType'];
  wallet_id: string | null;
  wallet_transaction_id: string | null;
  reference: string | null;
  idempotency_key: string | null;
  request_hash: string | null;
  payment_status: Payment['paymentStatus'];
  provider: string | null;
  provider_reference: string | null;
  failure_reason: string | null;
  attempt: number | null;
  created_at: Date;
  updated_at: Date;
}

function fromRow(r: PaymentRow): Payment {
  return {
    id: r.id,
    tenantId: r.tenant_id,
    environmentId: r.environment_id,
    invoiceId: r.invoice_id,
    amount: Number(r.amount),
    currency: r.currency,
    paymentMethodType: r.payment_method_type,
    walletId: r.wallet_id,
    walletTransactionId: r.wallet_transaction_id,
    reference: r.reference,
    idempotencyKey: r.idempotency_key,
    requestHash: r.request_hash,
    paymentStatus: r.payment_status,
    provider: r.provider,
    providerReference: r.provider_reference,
    failureReason: r.failure_reason,
    attempt: r.attempt,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

function toRow(p: Payment): PaymentRow {
  return {
    id: p.id,
    tenant_id: p.tenantId,
    environment_id: p.environmentId,
    invoice_id: p.invoiceId,
    amount: p.amount,
    currency: p.currency,
    payment_method_type: p.paymentMethodType,
    wallet_id: p.walletId,
    wallet_transaction_id: p.walletTransactionId,
    reference: p.reference,
    idempotency_key: p.idempotencyKey,
    request_hash: p.requestHash,
    payment_status: p.paymentStatus,
    provider: p.provider,
    provider_reference: p.providerReference,
    failure_reason: p.failureReason,
    attempt: p.attempt,
    created_at: p.createdAt,
    updated_at: p.updatedAt,
  };
}

const scoped = (conn: Conn, scope: Scope) => conn<PaymentRow>('payments').where({ tenant_id: scope.tenantId, environment_id: scope.environmentId });

export class PaymentStore {
  /** Inserts a payment; false (nothing written) when its idempotency key is taken. */
  async insert(trx: Trx, p: Payment): Promise<boolean> {
    const rows = await trx('payments').insert(toRow(p)).onConflict().ignore().returning('id');
    return rows.length === 1;
  }

  async get(conn: Conn, scope: Scope, id: string): Promise<Payment | undefined> {
    const row = await scoped(conn, scope).where({ id }).first();
    return row && fromRow(row);
  }

  async getById(conn: Conn, id: string): Promise<Payment | undefined> {
    const row = await conn<PaymentRow>('payments').where({ id }).first();
    return row && fromRow(row);
  }

  async getByIdempotencyKey(conn: Conn, scope: Scope, key: string): Promise<Payment | undefined> {
    const row = await scoped(conn, scope).where({ idempotency_key: key }).first();
    return row && fromRow(row);
  }

  async getForUpdate(trx: Trx, id: string): Promise<Payment | undefined> {
    const row = await trx<PaymentRow>('payments').where({ id }).forUpdate().first();
    return row && fromRow(row);
  }

  async save(trx: Trx, p: Payment): Promise<Payment> {
    const rows = await trx<PaymentRow>('payments').where({ id: p.id }).update(toRow(p)).returning('*');
    return fromRow(rows[0] as PaymentRow);
  }

  async list(conn: Conn, scope: Scope, q: { invoiceId?: string; limit: number; offset: number }): Promise<{ items: Payment[]; total: number }> {
    const filtered = () => {
      const b = scoped(conn, scope);
      if (q.invoiceId) b.where({ invoice_id: q.invoiceId });
      return b;
    };
    return pageOf(filtered, q, fromRow);
  }

  /** The succeeded payments of each of these invoices, oldest first (the documents' snapshot of a finalized chunk). */
  async succeededOf(conn: Conn, invoiceIds: string[]): Promise<Map<string, Payment[]>> {
    const out = new Map<string, Payment[]>();
    if (invoiceIds.length === 0) return out;
    const rows = await conn<PaymentRow>('payments')
      .whereIn('invoice_id', invoiceIds)
      .where({ payment_status: 'succeeded' })
      .orderBy([{ column: 'invoice_id' }, { column: 'created_at' }, { column: 'id' }]);
    for (const row of rows) {
      const p = fromRow(row as PaymentRow);
      out.set(p.invoiceId, [...(out.get(p.invoiceId) ?? []), p]);
    }
    return out;
  }

  /** The dunning attempts made for an invoice (payments keyed `dunning:{invoice}:{n}`), and the last processor it was paid with. */
  async dunningState(conn: Conn, invoiceId: string): Promise<{ attempts: number; pending: boolean; lastProvider: string | null }> {
    const rows = await conn<PaymentRow>('payments').where({ invoice_id: invoiceId }).orderBy([{ column: 'created_at' }, { column: 'id' }]).select('attempt', 'payment_status', 'provider');
    return {
      attempts: rows.reduce((n, r) => Math.max(n, r.attempt ?? 0), 0),
      pending: rows.some((r) => r.payment_status === 'pending'),
      lastProvider: rows.filter((r) => r.provider).at(-1)?.provider ?? null,
    };
  }

  /** What pending payments of an invoice reserve. */
  async pendingAmount(trx: Trx, invoiceId: string): Promise<number> {
    const rows = await trx('payments').where({ invoice_id: invoiceId, payment_status: 'pending' }).sum<{ s: string | null }[]>({ s: 'amount' });
    return Number(rows[0]?.s ?? 0);
  }

  /** What succeeded payments of one method paid on an invoice (credit notes: CREDITS is wallet money, OFFLINE money received). */
  async succeededAmount(trx: Trx, invoiceId: string, method: Payment['paymentMethodType']): Promise<number> {
    const rows = await trx('payments').where({ invoice_id: invoiceId, payment_status: 'succeeded', payment_method_type: method }).sum<{ s: string | null }[]>({ s: 'amount' });
    return Number(rows[0]?.s ?? 0);
  }

  /** CREDITS payments left `pending` (a crash interrupted them), for the period job to complete; PROVIDER ones wait for their processor. */
  async pendingIds(conn: Conn, limit: number, scope?: Scope): Promise<string[]> {
    const q = conn<PaymentRow>('payments');
    if (scope) q.where({ tenant_id: scope.tenantId, environment_id: scope.environmentId });
    const rows = await q.where({ payment_status: 'pending', payment_method_type: 'CREDITS' }).orderBy('id').limit(limit).select('id');
    return rows.map((r) => r.id);
  }
}

/** Records a payment's events in the outbox, in order, keyed by the invoice id (with the invoice's events). */
export async function announcePayment(trx: Trx, p: Payment, types: PaymentEventType[], actor = 'system'): Promise<void> {
  for (const type of types) await writeOutbox(trx, TOPICS.billingEvents, p.invoiceId, paymentEvent(p, type, actor));
}

/** A payment event (`payload.payment` as the API shows it), to write keyed by its invoice id. */
export function paymentEvent(p: Payment, type: PaymentEventType, actor = 'system') {
  const ctx = { tenantId: p.tenantId, environmentId: p.environmentId, actor };
  return newDomainEvent(type, ctx, { payment: toPaymentView(p) });
}
