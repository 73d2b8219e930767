import type { Scope } from '@billstream/contracts';
import type { Trx } from '@billstream/db';
import { exact, toDecimalString } from '@billstream/money';
import type { Allocation, AllocationStatus, DebitPart, InvoiceDebit, InvoiceRecord } from './domain';

/** Class id of the invoice locks (pg_advisory_xact_lock(int, int)): 'winv'. */
const INVOICE_LOCK = 0x7769_6e76;

interface DebitPartJson {
  walletId: string;
  transactionId: string;
  credits: string;
  amount: string;
}

interface AllocationJson {
  prepaid: (DebitPartJson & { lines: Array<{ id: string; amount: string }> }) | null;
  postpaid: DebitPartJson | null;
}

interface AllocationRow {
  tenant_id: string;
  environment_id: string;
  invoice_id: string;
  status: AllocationStatus;
  result: AllocationJson | string | null;
  request_hash: string | null;
  voided_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

interface InvoiceDebitRow {
  tenant_id: string;
  environment_id: string;
  key: string;
  invoice_id: string;
  wallet_id: string;
  transaction_id: string;
  credits: string;
  amount: string;
  request_hash: string | null;
  refund_transaction_id: string | null;
  refunded_at: Date | null;
  refund_skipped: boolean;
  created_at: Date;
}

function partToJson(p: DebitPart): DebitPartJson {
  return { walletId: p.walletId, transactionId: p.transactionId, credits: toDecimalString(p.credits), amount: toDecimalString(p.amount) };
}

function partFromJson(p: DebitPartJson): DebitPart {
  return { walletId: p.walletId, transactionId: p.transactionId, credits: exact(p.credits), amount: exact(p.amount) };
}

function allocationToJson(a: Pick<Allocation, 'prepaid' | 'postpaid'>): AllocationJson {
  return {
    prepaid: a.prepaid && { ...partToJson(a.prepaid), lines: a.prepaid.lines.map((l) => ({ id: l.id, amount: toDecimalString(l.amount) })) },
    postpaid: a.postpaid && partToJson(a.postpaid),
  };
}

function recordFromRow(row: AllocationRow): InvoiceRecord {
  const json = typeof row.result === 'string' ? (JSON.parse(row.result) as AllocationJson) : row.result;
  return {
    invoiceId: row.invoice_id,
    status: row.status,
    allocation: json && {
      prepaid: json.prepaid && { ...partFromJson(json.prepaid), lines: json.prepaid.lines.map((l) => ({ id: l.id, amount: exact(l.amount) })) },
      postpaid: json.postpaid && partFromJson(json.postpaid),
    },
    requestHash: row.request_hash,
  };
}

function debitToRow(d: InvoiceDebit): InvoiceDebitRow {
  return {
    tenant_id: d.tenantId,
    environment_id: d.environmentId,
    key: d.key,
    invoice_id: d.invoiceId,
    wallet_id: d.walletId,
    transaction_id: d.transactionId,
    credits: toDecimalString(d.credits),
    amount: toDecimalString(d.amount),
    request_hash: d.requestHash,
    refund_transaction_id: d.refundTransactionId,
    refunded_at: d.refundedAt,
    refund_skipped: d.refundSkipped,
    created_at: d.createdAt,
  };
}

function debitFromRow(r: InvoiceDebitRow): InvoiceDebit {
  return {
    tenantId: r.tenant_id,
    environmentId: r.environment_id,
    key: r.key,
    invoiceId: r.invoice_id,
    walletId: r.wallet_id,
    transactionId: r.transaction_id,
    credits: exact(r.credits),
    amount: exact(r.amount),
    requestHash: r.request_hash,
    refundTransactionId: r.refund_transaction_id,
    refundedAt: r.refunded_at,
    refundSkipped: r.refund_skipped,
    createdAt: r.created_at,
  };
}

/** The text whose hashtext is an invoice's lock key. */
const lockKey = (scope: Scope, invoiceId: string) => JSON.stringify([scope.tenantId, scope.environmentId, invoiceId]);

const scoped = (scope: Scope, invoiceId: string) => ({
  tenant_id: scope.tenantId,
  environment_id: scope.environmentId,
  invoice_id: invoiceId,
});

/** Reads and writes the wallet's record of invoices (tables invoice_allocations and invoice_debits). */
export class InvoiceStore {
  /**
   * Serializes the work on one invoice until the transaction ends: allocation, payments and
   * refund of an invoice take this lock before any wallet lock, so they never interleave
   * (a refund cannot miss a debit a concurrent payment is writing) and never deadlock.
   */
  async lock(trx: Trx, scope: Scope, invoiceId: string): Promise<void> {
    await trx.raw('SELECT pg_advisory_xact_lock(?, hashtext(?))', [INVOICE_LOCK, lockKey(scope, invoiceId)]);
  }

  /**
   * `lock` for several invoices, in one statement: the locks are taken in the order of their
   * keys (each key once), so two calls locking overlapping sets never deadlock. The keys are
   * `lock`'s, so a batch and a single call on one invoice take the same lock.
   */
  async lockMany(trx: Trx, scope: Scope, invoiceIds: string[]): Promise<void> {
    if (invoiceIds.length === 0) return;
    // The subquery sorts (ORDER BY keeps it from being flattened); the outer list locks row by row in that order.
    await trx.raw(
      `SELECT pg_advisory_xact_lock(?, s.k) FROM (SELECT DISTINCT hashtext(x) AS k FROM unnest(?::text[]) AS x ORDER BY k) s`,
      [INVOICE_LOCK, invoiceIds.map((id) => lockKey(scope, id))],
    );
  }

  async find(trx: Trx, scope: Scope, invoiceId: string): Promise<InvoiceRecord | undefined> {
    const row = await trx('invoice_allocations').where(scoped(scope, invoiceId)).first<AllocationRow | undefined>();
    return row && recordFromRow(row);
  }

  /** The records of the invoices that have one, by invoice id, in one statement. */
  async findMany(trx: Trx, scope: Scope, invoiceIds: string[]): Promise<Map<string, InvoiceRecord>> {
    if (invoiceIds.length === 0) return new Map();
    const rows = await trx('invoice_allocations')
      .where({ tenant_id: scope.tenantId, environment_id: scope.environmentId })
      .whereIn('invoice_id', invoiceIds)
      .select<AllocationRow[]>();
    return new Map(rows.map((r) => [r.invoice_id, recordFromRow(r)]));
  }

  /** Stores new allocations (status allocated) with the hashes of their requests, in one statement. */
  async insertAllocations(trx: Trx, scope: Scope, allocations: Array<{ allocation: Allocation; requestHash: string }>, now: Date): Promise<void> {
    if (allocations.length === 0) return;
    await trx('invoice_allocations').insert(
      allocations.map(({ allocation, requestHash }) => ({
        ...scoped(scope, allocation.invoiceId),
        status: 'allocated',
        result: JSON.stringify(allocationToJson(allocation)),
        request_hash: requestHash,
        voided_at: null,
        created_at: now,
        updated_at: now,
      })),
    );
  }

  /** Tombstones the invoice: its row becomes voided (a row without allocation when there was none). */
  async tombstone(trx: Trx, scope: Scope, invoiceId: string, now: Date): Promise<void> {
    await trx('invoice_allocations')
      .insert({ ...scoped(scope, invoiceId), status: 'voided', result: null, request_hash: null, voided_at: now, created_at: now, updated_at: now })
      .onConflict(['tenant_id', 'environment_id', 'invoice_id'])
      .merge({ status: 'voided', voided_at: trx.raw('COALESCE(invoice_allocations.voided_at, excluded.voided_at)'), updated_at: now });
  }

  async insertDebits(trx: Trx, debits: InvoiceDebit[]): Promise<void> {
    if (debits.length > 0) await trx('invoice_debits').insert(debits.map(debitToRow));
  }

  async debitByKey(trx: Trx, scope: Scope, key: string): Promise<InvoiceDebit | undefined> {
    const row = await trx('invoice_debits')
      .where({ tenant_id: scope.tenantId, environment_id: scope.environmentId, key })
      .first<InvoiceDebitRow | undefined>();
    return row && debitFromRow(row);
  }

  /** The invoice's debits in the order they were written. */
  async debitsOf(trx: Trx, scope: Scope, invoiceId: string): Promise<InvoiceDebit[]> {
    const rows = await trx('invoice_debits')
      .where(scoped(scope, invoiceId))
      .orderBy([{ column: 'created_at' }, { column: 'transaction_id' }])
      .select<InvoiceDebitRow[]>();
    return rows.map(debitFromRow);
  }

  /** Records the refunds of debits (each debit's refund transaction, or skipped). */
  async markRefunded(trx: Trx, debits: InvoiceDebit[]): Promise<void> {
    for (const d of debits) {
      await trx('invoice_debits')
        .where({ tenant_id: d.tenantId, environment_id: d.environmentId, key: d.key })
        .update({ refund_transaction_id: d.refundTransactionId, refunded_at: d.refundedAt, refund_skipped: d.refundSkipped });
    }
  }
}
