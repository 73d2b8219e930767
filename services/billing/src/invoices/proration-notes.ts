import type { Conn } from '@billstream/db';
import { PRORATION_NOTE_KEY } from './unpaid-proration';

/**
 * What plan changes' credit notes (ADR 0056: the unused time of an invoice still due, instead of a
 * PRORATION_CREDIT line) took off each subscription's periods starting at `periodStarts`, on
 * invoices not voided and not in `except`. Keyed `subscriptionId@periodStartMs` as the period's
 * charges (`InvoiceStore.periodCharges`), which subtract it.
 */
export async function loweredByChanges(conn: Conn, subscriptionIds: string[], periodStarts: Date[], except: string[]): Promise<Map<string, number>> {
  const rows = await conn('credit_notes as n')
    .join('invoices as i', 'i.id', 'n.invoice_id')
    .join('credit_note_lines as cl', 'cl.credit_note_id', 'n.id')
    .join('invoice_line_items as l', 'l.id', 'cl.invoice_line_item_id')
    .whereIn('i.subscription_id', [...new Set(subscriptionIds)])
    .where('n.status', 'issued')
    .whereRaw('n.metadata ->> ? IS NOT NULL', [PRORATION_NOTE_KEY])
    .whereRaw('COALESCE(l.billing_period_start, l.period_start) = ANY(?)', [periodStarts])
    .whereNot('i.status', 'voided')
    .modify((q) => (except.length > 0 ? q.whereNotIn('i.id', except) : q))
    .groupBy('i.subscription_id', conn.raw('COALESCE(l.billing_period_start, l.period_start)'))
    .select<Array<{ subscription_id: string; period_start: Date; amount: string }>>(
      'i.subscription_id',
      conn.raw('COALESCE(l.billing_period_start, l.period_start) AS period_start'),
      conn.raw('sum(cl.amount) as amount'),
    );
  return new Map(rows.map((r) => [`${r.subscription_id}@${r.period_start.getTime()}`, Number(r.amount)]));
}
