import type { Express } from 'express';
import { planChangeApi, type InvoiceResponse } from '@billstream/contracts';
import { mountRoute, type RequestContext } from '@billstream/http';
import type { Logger } from '@billstream/logger';
import { toInvoiceView } from '../invoices/view';
import { toSubscriptionView } from '../subscriptions/view';
import type { PlanChangeService } from './service';
import { planChangeOf } from './wire';

const eventContextOf = (ctx: RequestContext) => ({ tenantId: ctx.tenantId, environmentId: ctx.environmentId, actor: ctx.actor, requestId: ctx.requestId });

/** POST /v1/subscriptions/{id}/change, .../change/preview and DELETE .../pending_change (docs/api/plan-changes.md). */
export function mountPlanChangeRoutes(app: Express, changes: PlanChangeService, logger: Logger): void {
  mountRoute(
    app,
    planChangeApi.changeSubscription,
    async ({ params, body, ctx }) => {
      const r = await changes.change(eventContextOf(ctx), params.id, planChangeOf(params.id, body));
      return { subscription: r.subscription, invoice: r.invoice && toInvoiceView(r.invoice) };
    },
    logger,
  );
  mountRoute(
    app,
    planChangeApi.previewSubscriptionChange,
    async ({ params, body, ctx }) => {
      const r = await changes.preview(eventContextOf(ctx), params.id, planChangeOf(params.id, body));
      const asOf = r.effectiveAt.toISOString();
      let invoice = null;
      if (r.invoice) {
        // The upcoming-invoice shape: nothing of it was stored.
        const { id: _id, invoice_number: _n, available_actions: _a, finalized_at: _f, voided_at: _v, created_at: _c, updated_at: _u, ...view }: InvoiceResponse = toInvoiceView(r.invoice);
        invoice = { ...view, as_of: asOf };
      }
      return { subscription: { ...r.subscription, effective_at: asOf }, invoice };
    },
    logger,
  );
  mountRoute(app, planChangeApi.cancelPendingChange, async ({ params, ctx }) => toSubscriptionView(await changes.cancelPending(eventContextOf(ctx), params.id)), logger);
}
