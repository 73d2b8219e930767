import type { Express } from 'express';
import { invoiceApi } from '@billstream/contracts';
import { mountRoute } from '@billstream/http';
import type { Logger } from '@billstream/logger';
import type { PeriodJob } from './period-job';

/** `POST /v1/cron/bill-subscriptions`: one run of the period job for the caller's tenant and environment, for schedulers outside the service. */
export function mountRenewalRoutes(app: Express, periods: PeriodJob, logger: Logger): void {
  mountRoute(
    app,
    invoiceApi.billSubscriptions,
    // The caller's tenant and environment only (ADR 0035): the counts are theirs.
    async ({ ctx }) => {
      const r = await periods.runOnce({ tenantId: ctx.tenantId, environmentId: ctx.environmentId });
      return {
        invoices_created: r.invoices_created,
        subscriptions_billed: r.subscriptions_billed,
        invoices_finalized: r.invoices_finalized,
        invoices_marked_overdue: r.invoices_marked_overdue,
      };
    },
    logger,
  );
}
