import type { Scope } from '@billstream/contracts';
import { rowsOf, type Conn, type Knex, type Trx } from '@billstream/db';
import { exact, toDecimalString } from '@billstream/money';
import type { Decimal } from 'decimal.js';
import {
  FREE_REASONS,
  type SpendableCredit,
  type EntryFilter,
  type EntryReason,
  type EntryStatus,
  type EntryType,
  type LedgerEntry,
} from './domain';

export interface EntryRow {
  id: string;
  wallet_id: string;
  tenant_id: string;
  environment_id: string;
  type: EntryType;
  transaction_status: EntryStatus;
  credit_amount: string;
  amount: string;
  credit_balance_before: string;
  credit_balance_after: string;
  credits_available: string;
  expiry_date: Date | null;
  priority: number | null;
  transaction_reason: EntryReason;
  description: string | null;
  idempotency_key: string | null;
  request_hash: string | null;
  expired_credit_id: string | null;
  ledger_seq: number | null;
  created_at: Date;
  updated_at: Date;
}

export function entryFromRow(row: EntryRow): LedgerEntry {
  return {
    id: row.id,
    walletId: row.wallet_id,
    tenantId: row.tenant_id,
    environmentId: row.environment_id,
    type: row.type,
    status: row.transaction_status,
    creditAmount: exact(row.credit_amount),
    amount: exact(row.amount),
    creditBalanceBefore: exact(row.credit_balance_before),
    creditBalanceAfter: exact(row.credit_balance_after),
    creditsAvailable: exact(row.credits_available),
    expiryDate: row.expiry_date ? new Date(row.expiry_date) : null,
    priority: row.priority,
    reason: row.transaction_reason,
    description: row.description,
    idempotencyKey: row.idempotency_key,
    requestHash: row.request_hash,
    expiredCreditId: row.expired_credit_id,
    ledgerSeq: row.ledger_seq === null ? null : Number(row.ledger_seq),
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}

export function entryToRow(t: LedgerEntry): EntryRow {
  return {
    id: t.id,
    wallet_id: t.walletId,
    tenant_id: t.tenantId,
    environment_id: t.environmentId,
    type: t.type,
    transaction_status: t.status,
    credit_amount: toDecimalString(t.creditAmount),
    amount: toDecimalString(t.amount),
    credit_balance_before: toDecimalString(t.creditBalanceBefore),
    credit_balance_after: toDecimalString(t.creditBalanceAfter),
    credits_available: toDecimalString(t.creditsAvailable),
    expiry_date: t.expiryDate,
    priority: t.priority,
    transaction_reason: t.reason,
    description: t.description,
    idempotency_key: t.idempotencyKey,
    request_hash: t.requestHash,
    expired_credit_id: t.expiredCreditId,
    ledger_seq: t.ledgerSeq,
    created_at: t.createdAt,
    updated_at: t.updatedAt,
  };
}

function inWallet(scope: Scope, walletId: string) {
  return { wallet_id: walletId, tenant_id: scope.tenantId, environment_id: scope.environmentId };
}

const SPEND_ORDER = 'priority ASC NULLS LAST, expiry_date ASC NULLS LAST, created_at ASC, id ASC';
const SPEND_ORDER_T = 't.priority ASC NULLS LAST, t.expiry_date ASC NULLS LAST, t.created_at ASC, t.id ASC';

/**
 * Reads and writes the ledger's rows. Stateless: every method takes the connection first,
 * then the Scope of the wallet it reads. The spending reads (`spendable`, `debitReads`) go
 * by the ids of wallets already locked in their scope; saved rows carry their own.
 */
export class EntryStore {
  insertMany(conn: Conn, entries: LedgerEntry[]): Knex.QueryBuilder {
    return conn('transactions').insert(entries.map(entryToRow));
  }

  async update(trx: Trx, entry: LedgerEntry): Promise<void> {
    const { id: _id, wallet_id: _w, tenant_id: _t, environment_id: _e, created_at: _c, ...changes } = entryToRow(entry);
    await trx('transactions').where({ id: entry.id }).update(changes);
  }

  async byIdempotencyKeys(trx: Trx, scope: Scope, walletId: string, keys: string[]): Promise<Map<string, LedgerEntry>> {
    if (keys.length === 0) return new Map();
    const rows = await trx<EntryRow>('transactions').where(inWallet(scope, walletId)).whereIn('idempotency_key', keys);
    return new Map(rows.map((r) => [r.idempotency_key!, entryFromRow(r)]));
  }

  async byId(conn: Conn, scope: Scope, walletId: string, id: string): Promise<LedgerEntry | undefined> {
    const row = await conn<EntryRow>('transactions').where({ ...inWallet(scope, walletId), id }).first();
    return row && entryFromRow(row);
  }

  /** Entries of a tenant and environment by id (any wallet), in one statement. */
  async byIds(conn: Conn, scope: Scope, ids: string[]): Promise<Map<string, LedgerEntry>> {
    if (ids.length === 0) return new Map();
    const rows = await conn<EntryRow>('transactions').where({ tenant_id: scope.tenantId, environment_id: scope.environmentId }).whereIn('id', ids);
    return new Map(rows.map((r) => [r.id, entryFromRow(r as EntryRow)]));
  }

  /**
   * The unexpired completed credits needed to cover `credits`, in the spec's order: a
   * running sum picks the first credits until the amount is reached, so a wallet with many
   * credits sends back only the few it spends.
   */
  async spendable(trx: Trx, walletId: string, credits: Decimal, now: Date): Promise<SpendableCredit[]> {
    const { spendable } = await this.debitReads(trx, [], new Map([[walletId, credits]]), now);
    return spendable.get(walletId)!;
  }

  /**
   * What a batch of debits reads once its wallets are locked, in one statement: the earlier
   * entries carrying the batch's idempotency keys (wallet id -> key -> entry), and
   * for each wallet of `wants` the first spendable credits covering the amount wanted, in
   * the spec's order (as `spendable`).
   */
  async debitReads(
    trx: Trx,
    pairs: Array<{ walletId: string; key: string }>,
    wants: Map<string, Decimal>,
    now: Date,
  ): Promise<{ earlier: Map<string, Map<string, LedgerEntry>>; spendable: Map<string, SpendableCredit[]> }> {
    const earlier = new Map<string, Map<string, LedgerEntry>>();
    const spendable = new Map<string, SpendableCredit[]>([...wants.keys()].map((id) => [id, []]));
    if (pairs.length === 0 && wants.size === 0) return { earlier, spendable };
    const keyed = `SELECT 'e' AS part, t.* FROM transactions t WHERE t.wallet_id = ANY(?::text[]) AND t.idempotency_key = ANY(?::text[])`;
    const bindings: Knex.RawBinding[] = [];
    let sql = keyed;
    const keyBindings = [[...new Set(pairs.map((p) => p.walletId))], [...new Set(pairs.map((p) => p.key))]];
    if (wants.size > 0) {
      // The wanted amounts as two arrays: one text for any number of wallets, named and planned once (ADR 0054).
      bindings.push([...wants.keys()], [...wants.values()].map((credits) => toDecimalString(credits)), [...wants.keys()], now);
      sql = `WITH v(wallet_id, wanted) AS (SELECT * FROM unnest(?::text[], ?::numeric[])),
        spend AS (
          SELECT id FROM (
            SELECT t.id, t.credits_available, v.wanted,
                   sum(t.credits_available) OVER (PARTITION BY t.wallet_id ORDER BY ${SPEND_ORDER_T}) AS running
              FROM v JOIN transactions t ON t.wallet_id = v.wallet_id
             WHERE t.wallet_id = ANY(?::text[])
               AND t.type = 'CREDIT' AND t.transaction_status = 'COMPLETED' AND t.credits_available > 0
               AND (t.expiry_date IS NULL OR t.expiry_date > ?)
          ) c WHERE running - credits_available < wanted
        )
        SELECT 's' AS part, t.* FROM transactions t WHERE t.id IN (SELECT id FROM spend)
        UNION ALL ${keyed}
        ORDER BY part DESC, wallet_id, ${SPEND_ORDER}`;
    }
    bindings.push(...keyBindings);
    const wanted = new Set(pairs.map((p) => `${p.walletId}\u0000${p.key}`));
    for (const row of rowsOf<EntryRow & { part: 's' | 'e' }>(await trx.raw(sql, bindings))) {
      if (row.part === 's') {
        spendable.get(row.wallet_id)!.push({
          id: row.id,
          creditsAvailable: exact(row.credits_available),
          priority: row.priority,
          expiryDate: row.expiry_date ? new Date(row.expiry_date) : null,
          createdAt: new Date(row.created_at),
        });
      } else if (wanted.has(`${row.wallet_id}\u0000${row.idempotency_key}`)) {
        let byKey = earlier.get(row.wallet_id);
        if (!byKey) earlier.set(row.wallet_id, (byKey = new Map()));
        byKey.set(row.idempotency_key!, entryFromRow(row));
      }
    }
    return { earlier, spendable };
  }

  /** Completed credits of the wallet whose expiry has passed and that still hold credits. */
  async expiredWithCredits(trx: Trx, scope: Scope, walletId: string, now: Date): Promise<LedgerEntry[]> {
    const rows = await trx<EntryRow>('transactions')
      .where({ ...inWallet(scope, walletId), type: 'CREDIT', transaction_status: 'COMPLETED' })
      .where('credits_available', '>', 0)
      .whereNotNull('expiry_date')
      .where('expiry_date', '<=', now)
      .orderBy([{ column: 'expiry_date' }, { column: 'id' }]);
    return rows.map(entryFromRow);
  }

  /** Pending entries of the wallet (all of them are cancelled when it closes). */
  async pending(trx: Trx, scope: Scope, walletId: string): Promise<LedgerEntry[]> {
    const rows = await trx<EntryRow>('transactions')
      .where({ ...inWallet(scope, walletId), transaction_status: 'PENDING' })
      .orderBy('id');
    return rows.map(entryFromRow);
  }

  /** Sets the remaining credits of the given credit entries in one statement. */
  setCreditsAvailable(trx: Trx, updates: Array<{ id: string; creditsAvailable: Decimal }>, now: Date): Knex.Raw {
    return trx.raw(
      `UPDATE transactions t SET credits_available = v.available, updated_at = ?
         FROM unnest(?::text[], ?::numeric[]) AS v(id, available) WHERE t.id = v.id`,
      [now, updates.map((u) => u.id), updates.map((u) => toDecimalString(u.creditsAvailable))],
    );
  }

  /** Usable credits split into free and purchased (unexpired, completed). */
  async breakdown(conn: Conn, scope: Scope, walletId: string, now: Date): Promise<{ free: Decimal; purchased: Decimal }> {
    const rows = rowsOf<{ free: string | null; purchased: string | null }>(
      await conn.raw(
        `SELECT sum(credits_available) FILTER (WHERE transaction_reason = ANY(?::text[])) AS free,
                sum(credits_available) FILTER (WHERE transaction_reason <> ALL(?::text[])) AS purchased
           FROM transactions
          WHERE wallet_id = ? AND tenant_id = ? AND environment_id = ? AND type = 'CREDIT' AND transaction_status = 'COMPLETED' AND credits_available > 0
            AND (expiry_date IS NULL OR expiry_date > ?)`,
        [[...FREE_REASONS], [...FREE_REASONS], walletId, scope.tenantId, scope.environmentId, now],
      ),
    );
    return { free: exact(rows[0]?.free ?? 0), purchased: exact(rows[0]?.purchased ?? 0) };
  }

  async list(conn: Conn, scope: Scope, walletId: string, filter: EntryFilter): Promise<{ items: LedgerEntry[]; total: number }> {
    const base = conn('transactions').where(inWallet(scope, walletId));
    if (filter.type) base.where('type', filter.type);
    if (filter.status) base.where('transaction_status', filter.status);
    if (filter.reason) base.where('transaction_reason', filter.reason);
    const [rows, count] = await Promise.all([
      base
        .clone()
        .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }])
        .limit(filter.limit)
        .offset(filter.offset)
        .select<EntryRow[]>('*'),
      base.clone().count<{ count: string | number }[]>({ count: '*' }),
    ]);
    return { items: rows.map(entryFromRow), total: Number(count[0]?.count ?? 0) };
  }
}
