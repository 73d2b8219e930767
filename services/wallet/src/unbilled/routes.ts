import type { Express } from 'express';
import { walletUnbilledUsageApi } from '@billstream/contracts';
import { mountRoute } from '@billstream/http';
import type { Logger } from '@billstream/logger';
import type { Ledger } from '../ledger/ledger';
import { recordUnbilledUsage } from './record';
import type { UnbilledStore } from './store';

/** The internal route the billing service reports unbilled usage to (not routed by the gateway; ADR 0024). */
export function mountUnbilledRoutes(app: Express, ledger: Ledger, store: UnbilledStore, logger: Logger): void {
  mountRoute(
    app,
    walletUnbilledUsageApi.recordUnbilledUsage,
    async ({ body, ctx }) => {
      const updated = await recordUnbilledUsage(ledger, store, ctx, {
        asOf: new Date(body.as_of),
        customers: body.customers.map((c) => ({
          customerId: c.customer_id,
          amounts: c.amounts.map((a) => ({ currency: a.currency, amount: a.amount, invoices: a.invoices.map((i) => ({ invoiceId: i.invoice_id, amount: i.amount })) })),
        })),
      });
      return { wallets_updated: updated };
    },
    logger,
  );
}
