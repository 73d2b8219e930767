import type { Scope } from '@billstream/contracts';
import type { Conn, Trx } from '@billstream/db';

// The rows behind the credit notes of a fallen SUM (ADR 0046, decision 6): which threshold invoices billed a price, which closing invoices owe returns.

/** Finalized or paid threshold invoices of a subscription with a usage charge of `priceId` in the billing period starting at `periodStart`, newest first (what a fallen SUM's return credits, ADR 0046). */
export async function thresholdInvoicesBilling(conn: Conn, subscriptionId: string, periodStart: Date, priceId: string): Promise<string[]> {
  const rows = await conn('invoices as i')
    .where({ 'i.subscription_id': subscriptionId, 'i.billing_reason': 'SUBSCRIPTION_THRESHOLD' })
    .whereIn('i.status', ['finalized', 'paid'])
    .whereExists((q) =>
      q
        .select(conn.raw('1'))
        .from('invoice_line_items as l')
        .whereRaw('l.invoice_id = i.id')
        .where({ 'l.price_id': priceId, 'l.line_type': 'CHARGE' })
        .whereRaw('COALESCE(l.billing_period_start, l.period_start) = ?', [periodStart]),
    )
    .orderBy([
      { column: 'i.created_at', order: 'desc' },
      { column: 'i.id', order: 'desc' },
    ])
    .select<Array<{ id: string }>>('i.id');
  return rows.map((r) => r.id);
}

/** Finalized or paid invoices whose threshold returns are owed (of `scope` when given), oldest finalization first. */
export async function thresholdReturnsOwed(conn: Conn, limit: number, scope?: Scope): Promise<string[]> {
  const rows = await conn('invoices')
    .whereRaw(`threshold_returns <> '[]'::jsonb`)
    .whereNull('threshold_returned_at')
    .whereIn('status', ['finalized', 'paid'])
    .modify((q) => (scope ? q.where({ tenant_id: scope.tenantId, environment_id: scope.environmentId }) : q))
    .orderBy('finalized_at')
    .limit(limit)
    .select<Array<{ id: string }>>('id');
  return rows.map((r) => r.id);
}

/** Records that an invoice's threshold returns were written as credit notes. */
export async function markThresholdReturned(trx: Trx, id: string, at: Date): Promise<void> {
  await trx('invoices').where({ id }).update({ threshold_returned_at: at });
}
