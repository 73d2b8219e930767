/** One file: the store of the invoices table and its lines; every query on them in one class, so a column change is made in one place. */
import type { Scope } from '@billstream/contracts';
import type { Conn, Db, Trx } from '@billstream/db';
import type { DiscountAmount } from '../invoice-arithmetic';
import { updateMany } from '../shared/update-many';
import type { Invoice, InvoiceLine, InvoiceListQuery } from './domain';
import { changeRow, discountFromRow, discountRows, fromRow, groupBy, lineFromRow, lineRow, type DiscountRow, type InvoiceRow, type LineRow } from './rows';
import { loweredByChanges } from './proration-notes';
import type { OwnedInvoice } from './lifecycle';

const scoped = (conn: Conn, scope: Scope) => conn<InvoiceRow>('invoices').where({ tenant_id: scope.tenantId, environment_id: scope.environmentId });

export class InvoiceStore {
  /** Inserts a new invoice (`lifecycle.draft`'s) with its lines; false (nothing written) when its unique key is taken. */
  async insert(trx: Trx, i: OwnedInvoice): Promise<boolean> {
    return (await this.insertMany(trx, [i])).has(i.id);
  }

  /**
   * Inserts new invoices (`lifecycle.draft`'s) with their lines, two statements for all; an
   * invoice whose unique key is taken is skipped (nothing of it written). Answers the ids written.
   */
  async insertMany(trx: Trx, invoices: OwnedInvoice[]): Promise<Set<string>> {
    if (invoices.length === 0) return new Set();
    const rows = await trx('invoices')
      .insert(
        invoices.map((i) => ({
          id: i.id,
          tenant_id: i.tenantId,
          environment_id: i.environmentId,
          customer_id: i.customerId,
          subscription_id: i.subscriptionId,
          subscription_customer_id: i.subscriptionCustomerId,
          billing_reason: i.billingReason,
          sequence: i.sequence,
          source_key: i.sourceKey,
          source: i.source ? JSON.stringify(i.source) : null,
          currency: i.currency,
          period_start: i.periodStart,
          period_end: i.periodEnd,
          payment_terms_days: i.paymentTermsDays,
          version: i.version,
          created_at: i.createdAt,
          ...changeRow(i),
        })),
      )
      .onConflict()
      .ignore()
      .returning('id');
    const written = new Set(rows.map((r: { id: string }) => r.id));
    const inserted = invoices.filter((i) => written.has(i.id));
    const lines = inserted.flatMap((i) => i.lines.map((l) => lineRow(i.id, l)));
    if (lines.length > 0) await trx('invoice_line_items').insert(lines);
    const discounts = inserted.flatMap((i) => discountRows(i.id, i.discounts));
    if (discounts.length > 0) await trx('invoice_discounts').insert(discounts);
    return written;
  }

  /** The invoices of `rows` with their lines and discounts, in position order. */
  private async withLines(conn: Conn, rows: InvoiceRow[]): Promise<Invoice[]> {
    if (rows.length === 0) return [];
    const ids = rows.map((r) => r.id);
    const lines = await conn<LineRow>('invoice_line_items')
      .whereIn('invoice_id', ids)
      .orderBy([{ column: 'invoice_id' }, { column: 'position' }]);
    const discounts = await conn<DiscountRow>('invoice_discounts')
      .whereIn('invoice_id', ids)
      .orderBy([{ column: 'invoice_id' }, { column: 'position' }]);
    const linesOf = groupBy(lines, lineFromRow);
    const discountsOf = groupBy(discounts, discountFromRow);
    return rows.map((r) => fromRow(r, linesOf.get(r.id) ?? [], discountsOf.get(r.id) ?? []));
  }

  async get(conn: Conn, scope: Scope, id: string): Promise<Invoice | undefined> {
    const row = await scoped(conn, scope).where({ id }).first();
    return row && (await this.withLines(conn, [row]))[0];
  }

  /** Any tenant's invoice by id (the period job works across tenants). */
  async getById(conn: Conn, id: string): Promise<Invoice | undefined> {
    const row = await conn<InvoiceRow>('invoices').where({ id }).first();
    return row && (await this.withLines(conn, [row]))[0];
  }

  /** Any tenant's invoices by id, with their lines (the period job's batch), in no particular order. */
  async getByIds(conn: Conn, ids: string[]): Promise<Invoice[]> {
    if (ids.length === 0) return [];
    return this.withLines(conn, await conn<InvoiceRow>('invoices').whereIn('id', ids));
  }

  /** A subscription's draft invoices, oldest first (a plan change with prorations finalizes them first, ADR 0056). */
  draftsOf = async (conn: Conn, subscriptionId: string): Promise<Invoice[]> => this.withLines(conn, await conn<InvoiceRow>('invoices').where({ subscription_id: subscriptionId, status: 'draft' }).orderBy('created_at'));

  /** The subscriptions of the invoices that have one (the period job's grants after finalization), one statement. */
  async subscriptionsOf(conn: Conn, ids: string[]): Promise<string[]> {
    const rows = await conn('invoices').whereIn('id', ids).whereNotNull('subscription_id').distinct<Array<{ subscription_id: string }>>('subscription_id');
    return rows.map((r) => r.subscription_id);
  }

  /** The invoices' rows (no lines), locked until the transaction ends, in id order (one statement). */
  async lockRows(trx: Trx, ids: string[]): Promise<Invoice[]> {
    if (ids.length === 0) return [];
    const rows = await trx<InvoiceRow>('invoices').whereIn('id', ids).orderBy('id').forUpdate();
    return rows.map((r) => fromRow(r as InvoiceRow, []));
  }

  /**
   * What each subscription's invoices billed for the periods starting at `periodStarts`
   * (docs/api/billing.md#minimum-commitments, period charges): the `amount`s of their lines of that period on
   * invoices not voided, negative lines included, true-ups and the invoices `except` left out, less
   * the credit notes a plan change made instead of proration credits (ADR 0056, `loweredByChanges`).
   * Keyed `subscriptionId@periodStartMs`; a period without lines is absent (0).
   */
  async periodCharges(conn: Conn, subscriptionIds: string[], periodStarts: Date[], except: string[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    if (subscriptionIds.length === 0) return out;
    const rows = await conn('invoice_line_items as l')
      .join('invoices as i', 'i.id', 'l.invoice_id')
      .whereIn('i.subscription_id', [...new Set(subscriptionIds)])
      .whereRaw('COALESCE(l.billing_period_start, l.period_start) = ANY(?)', [periodStarts])
      .whereNot('i.status', 'voided')
      .whereNot('l.line_type', 'COMMITMENT_TRUE_UP')
      .modify((q) => (except.length > 0 ? q.whereNotIn('i.id', except) : q))
      .groupBy('i.subscription_id', conn.raw('COALESCE(l.billing_period_start, l.period_start)'))
      .select<Array<{ subscription_id: string; period_start: Date; charges: string }>>(
        'i.subscription_id',
        conn.raw('COALESCE(l.billing_period_start, l.period_start) AS period_start'),
        conn.raw('sum(l.amount) as charges'),
      );
    for (const r of rows) out.set(`${r.subscription_id}@${r.period_start.getTime()}`, Number(r.charges));
    for (const [k, amount] of await loweredByChanges(conn, subscriptionIds, periodStarts, except)) out.set(k, (out.get(k) ?? 0) - amount);
    return out;
  }

  /**
   * The FIXED CHARGE lines of the subscription's invoices not voided whose window is exactly
   * [start, end) on the latest such invoice: the ADVANCE charges a plan change at a time inside
   * it credits back (docs/api/plan-changes.md). Only the latest: two changes in one whole second
   * (ADR 0057) both start their lines at that instant, and the later change already credited the
   * earlier one's lines in full (factor 1), so they have nothing left to credit. The invoice is
   * locked (a credit note waits).
   */
  async linesCovering(trx: Trx, subscriptionId: string, start: Date, end: Date): Promise<Array<InvoiceLine & { invoiceId: string }>> {
    const ids = await trx('invoices as i')
      .join('invoice_line_items as l', 'l.invoice_id', 'i.id')
      .where({ 'i.subscription_id': subscriptionId, 'l.line_type': 'CHARGE', 'l.price_type': 'FIXED', 'l.period_start': start, 'l.period_end': end })
      .whereNot('i.status', 'voided')
      .groupBy('i.id', 'i.created_at')
      .orderBy([{ column: 'i.created_at', order: 'desc' }, { column: 'i.id', order: 'desc' }])
      .limit(1)
      .pluck('i.id');
    if (ids.length === 0) return [];
    const locked = await trx('invoices').whereIn('id', ids).whereNot('status', 'voided').orderBy('id').forUpdate().pluck('id');
    if (locked.length === 0) return [];
    const rows = await trx<LineRow>('invoice_line_items')
      .whereIn('invoice_id', locked)
      .where({ line_type: 'CHARGE', price_type: 'FIXED', period_start: start, period_end: end })
      .orderBy([{ column: 'invoice_id' }, { column: 'position' }]);
    return rows.map((r) => ({ ...lineFromRow(r), invoiceId: r.invoice_id }));
  }

  /**
   * What non-voided threshold invoices of the subscriptions billed per price for the billing
   * periods starting at `periodStarts` (their usage lines less their deductions), invoices in
   * `except` left out. Keyed `subscriptionId@periodStartMs`, then by price id.
   */
  async thresholdBilled(conn: Conn, subscriptionIds: string[], periodStarts: Date[], except: string[]): Promise<Map<string, Map<string, number>>> {
    const out = new Map<string, Map<string, number>>();
    if (subscriptionIds.length === 0 || periodStarts.length === 0) return out;
    const rows = await conn('invoice_line_items as l')
      .join('invoices as i', 'i.id', 'l.invoice_id')
      .whereIn('i.subscription_id', [...new Set(subscriptionIds)])
      .where('i.billing_reason', 'SUBSCRIPTION_THRESHOLD')
      .whereNot('i.status', 'voided')
      .whereNotNull('l.price_id')
      .whereIn('l.line_type', ['CHARGE', 'THRESHOLD_DEDUCTION'])
      .whereRaw('COALESCE(l.billing_period_start, l.period_start) = ANY(?)', [periodStarts])
      .modify((q) => (except.length > 0 ? q.whereNotIn('i.id', except) : q))
      .groupBy('i.subscription_id', conn.raw('COALESCE(l.billing_period_start, l.period_start)'), 'l.price_id')
      .select<Array<{ subscription_id: string; period_start: Date; price_id: string; billed: string }>>(
        'i.subscription_id',
        conn.raw('COALESCE(l.billing_period_start, l.period_start) AS period_start'),
        'l.price_id',
        conn.raw('sum(l.amount) AS billed'),
      );
    for (const r of rows) {
      const k = `${r.subscription_id}@${r.period_start.getTime()}`;
      const byPrice = out.get(k) ?? new Map<string, number>();
      byPrice.set(r.price_id, Number(r.billed));
      out.set(k, byPrice);
    }
    return out;
  }

  /** The index of the highest threshold invoiced for the subscription's period part starting at `periodStart` (voided ones too); -1 for none. */
  async lastThresholdIndex(conn: Conn, subscriptionId: string, periodStart: Date): Promise<number> {
    const row = await conn('invoices')
      .where({ subscription_id: subscriptionId, period_start: periodStart, billing_reason: 'SUBSCRIPTION_THRESHOLD' })
      .max<{ max: number | null }>({ max: conn.raw('sequence::integer') })
      .first();
    return row?.max ?? -1;
  }

  /** Adds to lines' `credited_amount` (a plan change's proration credits), in one statement. */
  async addCredited(trx: Trx, credits: Array<{ lineId: string; amount: number }>): Promise<void> {
    if (credits.length === 0) return;
    await trx.raw(
      `UPDATE invoice_line_items l SET credited_amount = l.credited_amount + v.amount
         FROM (SELECT unnest(?::text[]) AS id, unnest(?::bigint[]) AS amount) v WHERE l.id = v.id`,
      [credits.map((c) => c.lineId), credits.map((c) => c.amount)],
    );
  }

  /** The invoice, locked until the transaction ends. */
  async getForUpdate(trx: Trx, id: string): Promise<Invoice | undefined> {
    const row = await trx<InvoiceRow>('invoices').where({ id }).forUpdate().first();
    return row && (await this.withLines(trx, [row]))[0];
  }

  /** The invoice's row (no lines), locked until the transaction ends. */
  async lockRow(trx: Trx, id: string): Promise<Invoice | undefined> {
    const row = await trx<InvoiceRow>('invoices').where({ id }).forUpdate().first();
    return row && fromRow(row, []);
  }

  async getBySourceKey(conn: Conn, scope: Scope, sourceKey: string): Promise<Invoice | undefined> {
    const row = await scoped(conn, scope).where({ source_key: sourceKey }).first();
    return row && (await this.withLines(conn, [row]))[0];
  }

  async list(conn: Conn, scope: Scope, q: InvoiceListQuery): Promise<{ items: Invoice[]; total: number }> {
    const filtered = () => {
      const b = scoped(conn, scope);
      if (q.customerIds) b.whereIn('customer_id', q.customerIds);
      if (q.subscriptionId) b.where({ subscription_id: q.subscriptionId });
      if (q.status) b.where({ status: q.status });
      return b;
    };
    const [rows, count] = await Promise.all([
      filtered()
        .orderBy([
          { column: 'created_at', order: 'desc' },
          { column: 'id', order: 'desc' },
        ])
        .limit(q.limit)
        .offset(q.offset),
      this.count(conn, scope, q),
    ]);
    return { items: await this.withLines(conn, rows), total: count };
  }

  /**
   * One page of an export (ADR 0019): invoices without their lines, oldest first by
   * (created_at, id), strictly after the cursor; created_at in [from, to); of one customer by
   * its external id (billing's customer projection).
   */
  async exportPage(
    conn: Conn,
    scope: Scope,
    q: { from?: string; to?: string; externalCustomerId?: string; after: { created_at: string; id: string } | null; limit: number },
  ): Promise<{ items: Invoice[]; next: { created_at: string; id: string } | null }> {
    const b = scoped(conn, scope);
    if (q.from) b.where('created_at', '>=', q.from);
    if (q.to) b.where('created_at', '<', q.to);
    if (q.externalCustomerId) {
      b.whereIn(
        'customer_id',
        conn('customers').select('id').where({ tenant_id: scope.tenantId, environment_id: scope.environmentId, external_id: q.externalCustomerId }),
      );
    }
    if (q.after) b.whereRaw('(created_at, id) > (?::timestamptz, ?)', [q.after.created_at, q.after.id]);
    const rows = (await b
      .select('*', conn.raw(`to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS cursor_at`))
      .orderBy([
        { column: 'created_at', order: 'asc' },
        { column: 'id', order: 'asc' },
      ])
      .limit(q.limit)) as Array<InvoiceRow & { cursor_at: string }>;
    const last = rows[rows.length - 1];
    return {
      items: rows.map((r) => fromRow(r, [])),
      next: last && rows.length === q.limit ? { created_at: last.cursor_at, id: last.id } : null,
    };
  }

  /**
   * The size of a filtered list. Without a customer or subscription filter it is read from
   * invoice_counts (kept by triggers; a tenant's status rows); those two filters are selective
   * and counted through their index.
   */
  private async count(conn: Conn, scope: Scope, q: InvoiceListQuery): Promise<number> {
    const status = q.status ? { status: q.status } : {};
    if (!q.customerIds && !q.subscriptionId) {
      const row = (await conn('invoice_counts')
        .where({ tenant_id: scope.tenantId, environment_id: scope.environmentId, ...status })
        .sum({ n: 'n' })
        .first()) as { n: number | string | null } | undefined;
      return Number(row?.n ?? 0);
    }
    const b = scoped(conn, scope).where(status);
    if (q.customerIds) b.whereIn('customer_id', q.customerIds);
    if (q.subscriptionId) b.where({ subscription_id: q.subscriptionId });
    const row = (await b.count({ n: '*' }).first()) as { n: number | string } | undefined;
    return Number(row?.n ?? 0);
  }

  /** Sets (or clears: revoked) the invoice's signed document links and bumps its version (ADR 0059). */
  async setDocumentLinks(trx: Trx, id: string, links: { hostedInvoiceUrl: string; invoicePdfUrl: string } | null, at: Date): Promise<void> {
    await trx('invoices').where({ id }).update({ hosted_invoice_url: links?.hostedInvoiceUrl ?? null, invoice_pdf_url: links?.invoicePdfUrl ?? null, updated_at: at, version: trx.raw('version + 1') });
  }

  /** Saves the invoice's changed columns and bumps its version: only what a transition of lifecycle.ts made (ADR 0062). */
  async save(trx: Trx, i: OwnedInvoice): Promise<Invoice> {
    const rows = await trx<InvoiceRow>('invoices')
      .where({ id: i.id })
      .update({ ...changeRow(i), work_lease_until: null, version: trx.raw('version + 1') } as never)
      .returning('*');
    return fromRow(rows[0] as InvoiceRow, i.lines, i.discounts);
  }

  /**
   * Saves invoices (a finalized chunk of the period job) in one statement: each row's changed
   * columns (`changeRow`) as one JSON record typed by the table itself, the version bumped and
   * the lease cleared as `save` does. Answers them in the order given.
   */
  async saveMany(trx: Trx, invoices: OwnedInvoice[]): Promise<Invoice[]> {
    const records = invoices.map((i) => {
      const row = changeRow(i);
      return {
        id: i.id,
        ...row,
        threshold_returns: JSON.parse(row.threshold_returns) as unknown,
        tax_breakdown: JSON.parse(row.tax_breakdown) as unknown,
        buyer_tax: row.buyer_tax === null ? null : (JSON.parse(row.buyer_tax) as unknown),
      };
    });
    const byId = new Map((await updateMany<InvoiceRow>(trx, 'invoices', records, ['work_lease_until = NULL', 'version = t.version + 1'])).map((r) => [r.id, r]));
    return invoices.map((i) => fromRow(byId.get(i.id)!, i.lines, i.discounts));
  }

  /**
   * Rewrites the lines of a recomputed draft (`lifecycle.reprice`) and its discounts' amounts: one stored
   * amount per (invoice, discount), replaced, never added to.
   */
  async replaceLines(trx: Trx, i: OwnedInvoice): Promise<void> {
    await trx('invoice_line_items').where({ invoice_id: i.id }).delete();
    if (i.lines.length > 0) await trx('invoice_line_items').insert(i.lines.map((l) => lineRow(i.id, l)));
    await this.replaceDiscounts(trx, i.id, i.discounts);
  }

  /** Replaces an invoice's discount amounts (a recompute or a retry writes them again, never twice). */
  private async replaceDiscounts(trx: Trx, invoiceId: string, discounts: DiscountAmount[]): Promise<void> {
    await trx('invoice_discounts').where({ invoice_id: invoiceId }).delete();
    if (discounts.length > 0) await trx('invoice_discounts').insert(discountRows(invoiceId, discounts));
  }

  /** Records the credits applied to each line of allocated drafts (`lifecycle.allocate`), in one statement: one round trip per invoice, not per line. */
  async updateApplied(trx: Trx, allocated: OwnedInvoice[]): Promise<void> {
    const applied = allocated.flatMap((i) => i.lines).filter((l) => l.prepaidCreditsApplied > 0);
    if (applied.length === 0) return;
    await trx.raw(
      `UPDATE invoice_line_items l SET prepaid_credits_applied = v.applied
       FROM jsonb_to_recordset(?::jsonb) AS v (id text, applied bigint) WHERE l.id = v.id`,
      [JSON.stringify(applied.map((l) => ({ id: l.id, applied: l.prepaidCreditsApplied })))],
    );
  }

  /**
   * Takes `count` consecutive numbers of a tenant+environment at once and answers the first (a
   * batch of finalizations holds the row lock once, not once per invoice).
   */
  async nextNumbers(trx: Trx, scope: Scope, count: number): Promise<number> {
    const rows = await trx.raw<{ rows: Array<{ last_number: string | number }> }>(
      `INSERT INTO invoice_counters (tenant_id, environment_id, last_number) VALUES (?, ?, ?)
       ON CONFLICT (tenant_id, environment_id) DO UPDATE SET last_number = invoice_counters.last_number + excluded.last_number
       RETURNING last_number`,
      [scope.tenantId, scope.environmentId, count],
    );
    return Number(rows.rows[0].last_number) - count + 1;
  }

  /**
   * Claims up to `limit` invoices matching `where` for `leaseMs` (SKIP LOCKED: replicas take
   * different ones; a claim a crash left behind expires). Answers their ids; with `scope`, of that tenant and environment only.
   */
  async claim(db: Db, kind: 'drafts' | 'taxes' | 'overdue' | 'refunds' | 'settles', now: Date, leaseMs: number, limit: number, scope?: Scope): Promise<string[]> {
    const condition = {
      drafts: `status = 'draft' AND finalize_after <= ?`,
      // Drafts the HTTP tax provider has not taxed yet (docs/api/taxes.md#http-provider).
      taxes: `status = 'draft' AND tax_status <> 'ok' AND ?::timestamptz IS NOT NULL`,
      overdue: `status = 'finalized' AND NOT overdue AND due_date <= ?`,
      refunds: `refund_state = 'pending' AND ?::timestamptz IS NOT NULL`,
      settles: `settle_state = 'pending' AND ?::timestamptz IS NOT NULL`,
    }[kind];
    const order = { drafts: 'finalize_after, id', taxes: 'id', overdue: 'due_date, id', refunds: 'id', settles: 'id' }[kind];
    const result = await db.raw<{ rows: Array<{ id: string }> }>(
      `UPDATE invoices SET work_lease_until = ? WHERE id IN (
         SELECT id FROM invoices WHERE ${condition} AND (work_lease_until IS NULL OR work_lease_until <= ?)${scope ? ' AND tenant_id = ? AND environment_id = ?' : ''}
         ORDER BY ${order} LIMIT ? FOR UPDATE SKIP LOCKED)
       RETURNING id`,
      [new Date(now.getTime() + leaseMs), now, now, ...(scope ? [scope.tenantId, scope.environmentId] : []), limit],
    );
    return result.rows.map((r) => r.id);
  }

  /** An invoiced top-up paid in full: its wallet credit is now to be settled (once: a repeat changes nothing). */
  async markSettlePending(trx: Trx, id: string): Promise<void> {
    await trx('invoices').where({ id }).whereNull('settle_state').update({ settle_state: 'pending' });
  }

  /** The wallet settled the top-up's credit; the claim of the period job ends with it. */
  async markSettled(conn: Conn, id: string): Promise<void> {
    await conn('invoices').where({ id, settle_state: 'pending' }).update({ settle_state: 'done', work_lease_until: null });
  }

  /**
   * The HTTP tax provider failed a draft (docs/api/taxes.md#http-provider): `tax_status: failed`,
   * its failures in a row, and the period job's claim held until `retryAt` (its backoff). Only
   * while it is the draft read (same version); nothing else of it changes.
   */
  async markTaxFailed(conn: Conn, d: Pick<Invoice, 'id' | 'version'>, attempts: number, retryAt: Date): Promise<void> {
    await conn('invoices').where({ id: d.id, status: 'draft', version: d.version }).update({ tax_status: 'failed', tax_attempts: attempts, work_lease_until: retryAt });
  }

  async releaseLease(conn: Conn, id: string): Promise<void> {
    await conn('invoices').where({ id }).update({ work_lease_until: null });
  }
}
