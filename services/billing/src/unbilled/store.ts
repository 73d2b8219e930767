import type { Scope } from '@billstream/contracts';
import { rowsOf, type Conn } from '@billstream/db';

/** A draft invoice's usage lines (minor units, with the exclusive tax they bear): unbilled until the wallet allocated it. */
export interface DraftUsage {
  invoiceId: string;
  customerId: string;
  currency: string;
  amount: number;
}

export interface ScopedCustomer {
  tenantId: string;
  environmentId: string;
  customerId: string;
}

/** Billing's reads for unbilled usage (ADR 0024): drafts' usage lines, and the customers a sweep covers. */
export class UnbilledStore {
  /** The usage lines' net amounts and exclusive tax (what credits pay of them) of the customers' draft invoices, per invoice (one statement). */
  async draftUsage(conn: Conn, scope: Scope, customerIds: string[]): Promise<DraftUsage[]> {
    if (customerIds.length === 0) return [];
    const rows = rowsOf<{ id: string; customer_id: string; currency: string; amount: string | number }>(
      await conn.raw(
        `SELECT i.id, i.customer_id, i.currency, sum(l.net_amount + CASE WHEN l.tax_behavior = 'exclusive' THEN l.tax_amount ELSE 0 END) AS amount
           FROM invoices i JOIN invoice_line_items l ON l.invoice_id = i.id AND l.price_type = 'USAGE'
          WHERE i.tenant_id = ? AND i.environment_id = ? AND i.status = 'draft' AND i.customer_id = ANY(?::text[])
          GROUP BY i.id, i.customer_id, i.currency
          ORDER BY i.id`,
        [scope.tenantId, scope.environmentId, customerIds],
      ),
    );
    return rows.map((r) => ({ invoiceId: r.id, customerId: r.customer_id, currency: r.currency, amount: Number(r.amount) }));
  }

  /**
   * The customers whose unbilled usage the periodic sweep recomputes: those with a running
   * subscription that bills usage or with a draft invoice, and those whose subscriptions or
   * invoices changed since `since` (a cancel, a void: their unbilled usage may have gone to 0).
   */
  async sweepCustomers(conn: Conn, since: Date): Promise<ScopedCustomer[]> {
    const rows = rowsOf<{ tenant_id: string; environment_id: string; customer_id: string }>(
      await conn.raw(
        `SELECT s.tenant_id, s.environment_id, coalesce(s.invoicing_customer_id, s.customer_id) AS customer_id FROM subscriptions s
          WHERE (s.status IN ('trialing', 'active') AND EXISTS (
                  SELECT 1 FROM subscription_prices sp JOIN prices p ON p.id = sp.price_id
                   WHERE sp.subscription_id = s.id AND p.type = 'USAGE'))
             OR s.updated_at >= ?
         UNION
         SELECT i.tenant_id, i.environment_id, i.customer_id FROM invoices i
          WHERE i.status = 'draft' OR i.updated_at >= ?
         ORDER BY 1, 2, 3`,
        [since, since],
      ),
    );
    return rows.map((r) => ({ tenantId: r.tenant_id, environmentId: r.environment_id, customerId: r.customer_id }));
  }

  /**
   * Customer ids of external ids in one scope (billing's projection; deleted customers left
   * out), with the payers of their running subscriptions (an invoicing ancestor counts its
   * children's usage in real time, ADR 0047).
   */
  async customerIdsOf(conn: Conn, scope: Scope, externalIds: string[]): Promise<string[]> {
    if (externalIds.length === 0) return [];
    const rows = rowsOf<{ id: string }>(
      await conn.raw(
        `WITH named AS (
           SELECT id FROM customers WHERE tenant_id = ? AND environment_id = ? AND deleted_at IS NULL AND external_id = ANY(?::text[])
         )
         SELECT id FROM named
         UNION
         SELECT s.invoicing_customer_id FROM subscriptions s JOIN named ON named.id = s.customer_id
          WHERE s.tenant_id = ? AND s.environment_id = ? AND s.invoicing_customer_id IS NOT NULL AND s.status IN ('trialing', 'active')`,
        [scope.tenantId, scope.environmentId, externalIds, scope.tenantId, scope.environmentId],
      ),
    );
    return rows.map((r) => r.id);
  }
}
