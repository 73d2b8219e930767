import type { EventContext } from '@billstream/outbox';
import { exact } from '@billstream/money';
import type { Ledger } from '../ledger/ledger';
import { countsUnbilledUsage } from '../wallets/domain';
import { unbilledKey, type UnbilledReport, type UnbilledUsage } from './domain';
import type { UnbilledStore } from './store';

/**
 * Records what the billing service computed (ADR 0024), in one database transaction: the wallets
 * of the reported customers that count usage (PRE_PAID, allowing USAGE) are locked first (id
 * order, as every multi-wallet change), invoices the wallet already allocated are left out, each
 * (customer, currency) is written unless a newer computation is stored, and each locked wallet
 * whose unbilled usage changed moves its ongoing alert state in the same transaction, so
 * `wallet.ongoing_balance.dropped|recovered` goes through the outbox once per crossing.
 * A currency a customer's wallet has but the report does not list has no unbilled usage (0).
 */
export async function recordUnbilledUsage(ledger: Ledger, store: UnbilledStore, ctx: EventContext, report: UnbilledReport): Promise<number> {
  const customerIds = [...new Set(report.customers.map((c) => c.customerId))];
  const { result } = await ledger.transaction(async (trx) => {
    const now = ledger.clock();
    const wallets = await store.walletsOf(trx, ctx, customerIds);
    const counting = wallets.filter(countsUnbilledUsage);
    return ledger.changeManyIn(
      trx,
      counting.map((w) => ({ ctx, walletId: w.id })),
      async (changes) => {
        const invoiceIds = report.customers.flatMap((c) => c.amounts.flatMap((a) => a.invoices.map((i) => i.invoiceId)));
        const settled = await store.settledInvoices(trx, ctx, invoiceIds);
        const rows = new Map<string, UnbilledUsage>();
        for (const c of report.customers) {
          for (const a of c.amounts) {
            const invoices = Object.fromEntries(a.invoices.filter((i) => !settled.has(i.invoiceId)).map((i) => [i.invoiceId, i.amount]));
            const amount = a.amount + Object.values(invoices).reduce((x, y) => x + y, 0);
            rows.set(unbilledKey({ customerId: c.customerId, currency: a.currency }), { customerId: c.customerId, currency: a.currency, amount, invoices, asOf: report.asOf });
          }
        }
        for (const w of counting) {
          const key = unbilledKey(w);
          if (!rows.has(key)) rows.set(key, { customerId: w.customerId, currency: w.currency, amount: 0, invoices: {}, asOf: report.asOf });
        }
        const written = new Map((await store.saveNewer(trx, ctx, [...rows.values()], now)).map((r) => [unbilledKey(r), r]));
        let updated = 0;
        for (const change of changes) {
          const row = change && written.get(unbilledKey(change.wallet));
          if (!change || !row) continue;
          change.wallet.unbilledUsage = exact(row.amount);
          change.wallet.unbilledInvoices = row.invoices;
          change.wallet.unbilledAsOf = row.asOf;
          updated += 1;
        }
        return updated;
      },
    );
  });
  return result;
}
