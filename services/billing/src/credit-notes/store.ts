import { TOPICS } from '@billstream/bus';
import type { Scope } from '@billstream/contracts';
import { pageOf, type Conn, type Trx } from '@billstream/db';
import { newDomainEvent, writeOutbox } from '@billstream/outbox';
import { CREDIT_NOTE_EVENTS, type CreditNote, type CreditNoteLine, type CreditNoteListQuery } from './domain';
import { toCreditNoteView } from './view';

interface CreditNoteRow {
  id: string;
  tenant_id: string;
  environment_id: string;
  credit_note_number: string;
  invoice_id: string;
  customer_id: string;
  currency: string;
  reason: CreditNote['reason'];
  memo: string | null;
  amount: number | string;
  tax_amount?: number | string;
  total?: number | string;
  refund: CreditNote['refund'];
  status: CreditNote['status'];
  origin: CreditNote['origin'];
  pre_payment_amount: number | string;
  wallet_amount: number | string;
  refund_amount: number | string;
  refund_status: CreditNote['refundStatus'];
  wallet_transaction_id: string | null;
  idempotency_key: string | null;
  request_hash: string | null;
  metadata: Record<string, string>;
  voided_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

interface LineRow {
  id: string;
  credit_note_id: string;
  invoice_line_item_id: string;
  position: number;
  amount: number | string;
  tax_amount?: number | string;
  taxes?: Array<{ tax_rate_id: string; amount: number }>;
}

function fromRow(r: CreditNoteRow, lines: CreditNoteLine[]): CreditNote {
  return {
    id: r.id,
    tenantId: r.tenant_id,
    environmentId: r.environment_id,
    number: r.credit_note_number,
    invoiceId: r.invoice_id,
    customerId: r.customer_id,
    currency: r.currency,
    reason: r.reason,
    memo: r.memo,
    amount: Number(r.amount),
    taxAmount: Number(r.tax_amount ?? 0),
    total: Number(r.total ?? r.amount),
    refund: r.refund,
    status: r.status,
    origin: r.origin,
    prePaymentAmount: Number(r.pre_payment_amount),
    walletAmount: Number(r.wallet_amount),
    refundAmount: Number(r.refund_amount),
    refundStatus: r.refund_status,
    walletTransactionId: r.wallet_transaction_id,
    idempotencyKey: r.idempotency_key,
    requestHash: r.request_hash,
    metadata: r.metadata,
    voidedAt: r.voided_at,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    lines,
  };
}

function toRow(n: CreditNote): CreditNoteRow {
  return {
    id: n.id,
    tenant_id: n.tenantId,
    environment_id: n.environmentId,
    credit_note_number: n.number,
    invoice_id: n.invoiceId,
    customer_id: n.customerId,
    currency: n.currency,
    reason: n.reason,
    memo: n.memo,
    amount: n.amount,
    tax_amount: n.taxAmount,
    total: n.total,
    refund: n.refund,
    status: n.status,
    origin: n.origin,
    pre_payment_amount: n.prePaymentAmount,
    wallet_amount: n.walletAmount,
    refund_amount: n.refundAmount,
    refund_status: n.refundStatus,
    wallet_transaction_id: n.walletTransactionId,
    idempotency_key: n.idempotencyKey,
    request_hash: n.requestHash,
    metadata: n.metadata,
    voided_at: n.voidedAt,
    created_at: n.createdAt,
    updated_at: n.updatedAt,
  };
}

const scoped = (conn: Conn, scope: Scope) => conn<CreditNoteRow>('credit_notes').where({ tenant_id: scope.tenantId, environment_id: scope.environmentId });

/** What the credit notes of one invoice already took, by part (non-void notes only). */
export interface InvoiceCredited {
  walletAmount: number;
  refundAmount: number;
}

export class CreditNoteStore {
  private async withLines(conn: Conn, rows: CreditNoteRow[]): Promise<CreditNote[]> {
    if (rows.length === 0) return [];
    const lines = await conn<LineRow>('credit_note_lines')
      .whereIn(
        'credit_note_id',
        rows.map((r) => r.id),
      )
      .orderBy([{ column: 'credit_note_id' }, { column: 'position' }]);
    const byNote = new Map<string, CreditNoteLine[]>();
    for (const l of lines) {
      const list = byNote.get(l.credit_note_id) ?? [];
      list.push({
        id: l.id,
        invoiceLineItemId: l.invoice_line_item_id,
        position: l.position,
        amount: Number(l.amount),
        taxAmount: Number(l.tax_amount ?? 0),
        taxes: (l.taxes ?? []).map((t) => ({ taxRateId: t.tax_rate_id, amount: Number(t.amount) })),
      });
      byNote.set(l.credit_note_id, list);
    }
    return rows.map((r) => fromRow(r, byNote.get(r.id) ?? []));
  }

  /** Inserts a note with its lines; false (nothing written) when its idempotency key is taken. */
  async insert(trx: Trx, n: CreditNote): Promise<boolean> {
    const rows = await trx('credit_notes').insert(toRow(n)).onConflict().ignore().returning('id');
    if (rows.length !== 1) return false;
    await trx('credit_note_lines').insert(
      n.lines.map((l) => ({
        id: l.id,
        credit_note_id: n.id,
        invoice_line_item_id: l.invoiceLineItemId,
        position: l.position,
        amount: l.amount,
        tax_amount: l.taxAmount ?? 0,
        taxes: JSON.stringify((l.taxes ?? []).map((t) => ({ tax_rate_id: t.taxRateId, amount: t.amount }))),
      })),
    );
    return true;
  }

  async get(conn: Conn, scope: Scope, id: string): Promise<CreditNote | undefined> {
    const row = await scoped(conn, scope).where({ id }).first();
    return row && (await this.withLines(conn, [row]))[0];
  }

  async getById(conn: Conn, id: string): Promise<CreditNote | undefined> {
    const row = await conn<CreditNoteRow>('credit_notes').where({ id }).first();
    return row && (await this.withLines(conn, [row]))[0];
  }

  async getByIdempotencyKey(conn: Conn, scope: Scope, key: string): Promise<CreditNote | undefined> {
    const row = await scoped(conn, scope).where({ idempotency_key: key }).first();
    return row && (await this.withLines(conn, [row]))[0];
  }

  async getForUpdate(trx: Trx, id: string): Promise<CreditNote | undefined> {
    const row = await trx<CreditNoteRow>('credit_notes').where({ id }).forUpdate().first();
    return row && (await this.withLines(trx, [row]))[0];
  }

  async save(trx: Trx, n: CreditNote): Promise<CreditNote> {
    const rows = await trx<CreditNoteRow>('credit_notes').where({ id: n.id }).update(toRow(n)).returning('*');
    return fromRow(rows[0] as CreditNoteRow, n.lines);
  }

  async list(conn: Conn, scope: Scope, q: CreditNoteListQuery): Promise<{ items: CreditNote[]; total: number }> {
    const filtered = () => {
      const b = scoped(conn, scope);
      if (q.invoiceId) b.where({ invoice_id: q.invoiceId });
      if (q.customerIds) b.whereIn('customer_id', q.customerIds);
      if (q.status) b.where({ status: q.status });
      return b;
    };
    const page = await pageOf(filtered, q, (r) => r);
    return { items: await this.withLines(conn, page.items), total: page.total };
  }

  /** What the non-void notes of an invoice gave back to wallets and refunded (call under the invoice's lock). */
  async creditedOf(trx: Trx, invoiceId: string): Promise<InvoiceCredited> {
    const rows = await trx('credit_notes')
      .where({ invoice_id: invoiceId, status: 'issued' })
      .select(trx.raw('COALESCE(SUM(wallet_amount), 0) AS w, COALESCE(SUM(refund_amount), 0) AS r'));
    const row = rows[0] as { w: string | number; r: string | number };
    return { walletAmount: Number(row.w), refundAmount: Number(row.r) };
  }

  /** Adds `delta` to each line's `credited_amount` (negative on a void), in one statement. */
  async addCredited(trx: Trx, lines: Array<{ invoiceLineItemId: string; amount: number }>, sign: 1 | -1): Promise<void> {
    await trx.raw(
      `UPDATE invoice_line_items l SET credited_amount = l.credited_amount + v.delta
       FROM jsonb_to_recordset(?::jsonb) AS v (id text, delta bigint) WHERE l.id = v.id`,
      [JSON.stringify(lines.map((l) => ({ id: l.invoiceLineItemId, delta: sign * l.amount })))],
    );
  }

  /** The INVOICE_VOID note of an invoice, locked (at most one: a voided invoice is never voided again). */
  async voidNoteOf(trx: Trx, invoiceId: string): Promise<CreditNote | undefined> {
    const row = await trx<CreditNoteRow>('credit_notes').where({ invoice_id: invoiceId, origin: 'INVOICE_VOID' }).forUpdate().first();
    return row && (await this.withLines(trx, [row]))[0];
  }

  /** The next credit note number of a tenant+environment (gap-free: rolled back with its transaction). */
  async nextNumber(trx: Trx, scope: Scope): Promise<number> {
    const rows = await trx.raw<{ rows: Array<{ last_number: string | number }> }>(
      `INSERT INTO credit_note_counters (tenant_id, environment_id, last_number) VALUES (?, ?, 1)
       ON CONFLICT (tenant_id, environment_id) DO UPDATE SET last_number = credit_note_counters.last_number + 1
       RETURNING last_number`,
      [scope.tenantId, scope.environmentId],
    );
    return Number(rows.rows[0]!.last_number);
  }

  /** Moves a pending note to the back of the period job's queue (a refusal or a failure), so others are not starved. */
  async touchPending(conn: Conn, id: string, now: Date): Promise<void> {
    await conn('credit_notes').where({ id, refund_status: 'pending' }).update({ updated_at: now });
  }

  /** Notes whose wallet credit is still to make (the period job), oldest first. */
  async pendingRefundIds(conn: Conn, limit: number, scope?: Scope): Promise<string[]> {
    const q = conn<CreditNoteRow>('credit_notes');
    if (scope) q.where({ tenant_id: scope.tenantId, environment_id: scope.environmentId });
    const rows = await q.where({ refund_status: 'pending', origin: 'MANUAL' }).orderBy('updated_at').limit(limit).select('id');
    return rows.map((r) => r.id);
  }
}

/** Records a credit note event in the outbox, keyed by its invoice id (with the invoice's events). */
export async function announceCreditNote(trx: Trx, type: (typeof CREDIT_NOTE_EVENTS)[keyof typeof CREDIT_NOTE_EVENTS], n: CreditNote, actor = 'system'): Promise<void> {
  const ctx = { tenantId: n.tenantId, environmentId: n.environmentId, actor };
  await writeOutbox(trx, TOPICS.billingEvents, n.invoiceId, newDomainEvent(type, ctx, { credit_note: toCreditNoteView(n) }));
}
