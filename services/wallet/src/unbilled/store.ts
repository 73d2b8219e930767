import type { Scope } from '@billstream/contracts';
import { rowsOf, type Trx } from '@billstream/db';
import type { PriceType, WalletStatus, WalletType } from '../wallets/domain';
import type { UnbilledUsage } from './domain';

interface UnbilledRow {
  customer_id: string;
  currency: string;
  amount: string | number;
  invoices: Record<string, number> | string;
  as_of: Date | string;
}

function fromRow(r: UnbilledRow): UnbilledUsage {
  return {
    customerId: r.customer_id,
    currency: r.currency,
    amount: Number(r.amount),
    invoices: typeof r.invoices === 'string' ? (JSON.parse(r.invoices) as Record<string, number>) : r.invoices,
    asOf: new Date(r.as_of),
  };
}

/** Wallets of a customer that a report may concern (ADR 0024). */
export interface UnbilledTarget {
  id: string;
  customerId: string;
  currency: string;
  walletType: WalletType;
  walletStatus: WalletStatus;
  allowedPriceTypes: PriceType[];
}

/** `wallet.unbilled_usage`: the latest unbilled usage per (customer, currency). */
export class UnbilledStore {
  /** The customers' wallets that are not closed (one statement). */
  async walletsOf(trx: Trx, scope: Scope, customerIds: string[]): Promise<UnbilledTarget[]> {
    const rows = await trx('wallets')
      .where({ tenant_id: scope.tenantId, environment_id: scope.environmentId })
      .whereIn('customer_id', customerIds)
      .whereNot('wallet_status', 'closed')
      .orderBy('id')
      .select<
        Array<{ id: string; customer_id: string; currency: string; wallet_type: WalletType; wallet_status: WalletStatus; allowed_price_types: PriceType[] | string }>
      >('id', 'customer_id', 'currency', 'wallet_type', 'wallet_status', 'allowed_price_types');
    return rows.map((r) => ({
      id: r.id,
      customerId: r.customer_id,
      currency: r.currency,
      walletType: r.wallet_type,
      walletStatus: r.wallet_status,
      allowedPriceTypes: typeof r.allowed_price_types === 'string' ? (JSON.parse(r.allowed_price_types) as PriceType[]) : r.allowed_price_types,
    }));
  }

  /** Of these invoices, the ones the wallet service allocated or voided already (their usage is no longer unbilled). */
  async settledInvoices(trx: Trx, scope: Scope, invoiceIds: string[]): Promise<Set<string>> {
    if (invoiceIds.length === 0) return new Set();
    const rows = await trx('invoice_allocations')
      .where({ tenant_id: scope.tenantId, environment_id: scope.environmentId })
      .whereIn('invoice_id', invoiceIds)
      .select<Array<{ invoice_id: string }>>('invoice_id');
    return new Set(rows.map((r) => r.invoice_id));
  }

  /**
   * Writes each row unless the stored one is as new or newer (`as_of` only moves forward), in
   * one statement, rows in key order (two writers never deadlock). Answers the rows written.
   */
  async saveNewer(trx: Trx, scope: Scope, rows: UnbilledUsage[], now: Date): Promise<UnbilledUsage[]> {
    if (rows.length === 0) return [];
    const sorted = [...rows].sort((a, b) => (a.customerId === b.customerId ? (a.currency < b.currency ? -1 : 1) : a.customerId < b.customerId ? -1 : 1));
    const values = sorted.map(() => '(?, ?, ?, ?, ?::bigint, ?::jsonb, ?::timestamptz, ?::timestamptz)').join(', ');
    const written = rowsOf<UnbilledRow>(
      await trx.raw(
        `INSERT INTO unbilled_usage AS u (tenant_id, environment_id, customer_id, currency, amount, invoices, as_of, updated_at)
         VALUES ${values}
         ON CONFLICT (tenant_id, environment_id, customer_id, currency) DO UPDATE
            SET amount = excluded.amount, invoices = excluded.invoices, as_of = excluded.as_of, updated_at = excluded.updated_at
          WHERE u.as_of < excluded.as_of
         RETURNING u.customer_id, u.currency, u.amount, u.invoices, u.as_of`,
        sorted.flatMap((r) => [scope.tenantId, scope.environmentId, r.customerId, r.currency, r.amount, JSON.stringify(r.invoices), r.asOf, now]),
      ),
    );
    return written.map(fromRow);
  }

  /**
   * Takes invoices the wallet just allocated out of their customers' unbilled usage (one
   * statement): their usage lines are now debited, so they must not count twice.
   */
  async dropInvoices(trx: Trx, scope: Scope, pairs: Array<{ customerId: string; currency: string }>, invoiceIds: string[], now: Date): Promise<void> {
    if (pairs.length === 0 || invoiceIds.length === 0) return;
    await trx.raw(
      `UPDATE unbilled_usage u
          SET amount = u.amount - coalesce((SELECT sum(e.value::bigint) FROM jsonb_each_text(u.invoices) e WHERE e.key = ANY(?::text[])), 0),
              invoices = u.invoices - ?::text[], updated_at = ?
        WHERE u.tenant_id = ? AND u.environment_id = ? AND u.customer_id = ANY(?::text[])
          AND (u.customer_id, u.currency) IN (SELECT * FROM unnest(?::text[], ?::text[]))`,
      [invoiceIds, invoiceIds, now, scope.tenantId, scope.environmentId, [...new Set(pairs.map((p) => p.customerId))], pairs.map((p) => p.customerId), pairs.map((p) => p.currency)],
    );
  }
}
