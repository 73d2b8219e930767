import type { Express } from 'express';
import { billingPayersInternalApi, billingApi, type CreateSubscriptionBody, type SubscriptionUsageResponse } from '@billstream/contracts';
import { mountRoute, type RequestContext } from '@billstream/http';
import type { Logger } from '@billstream/logger';
import { couponRefOf } from './discounts';
import type { NewSubscription, SubscriptionService } from './service';
import type { SubscriptionUsage, UsageService } from './usage';
import { toSubscriptionView } from './view';

const eventContextOf = (ctx: RequestContext) => ({ tenantId: ctx.tenantId, environmentId: ctx.environmentId, actor: ctx.actor, requestId: ctx.requestId });

function newSubscriptionOf(b: CreateSubscriptionBody): NewSubscription {
  return {
    customer: b.customer_id !== undefined ? { id: b.customer_id } : { externalId: b.external_customer_id! },
    planId: b.plan_id,
    currency: b.currency,
    billingPeriod: b.billing_period,
    startDate: b.start_date === undefined ? undefined : new Date(b.start_date),
    billingCycle: b.billing_cycle,
    timezone: b.timezone,
    trialPeriodDays: b.trial_period_days,
    paymentTermsDays: b.payment_terms_days,
    draft: b.draft,
    metadata: b.metadata ?? {},
    discounts: b.discounts?.map(couponRefOf),
    commitmentAmount: b.commitment_amount,
    usageThresholds: b.usage_thresholds?.map((t) => t.amount),
    invoicingCustomerId: b.invoicing_customer_id,
    priceOverrides: b.price_overrides?.map((o) => ({
      priceId: o.price_id,
      amount: o.amount,
      tiers: o.tiers?.map((t) => ({ upTo: t.up_to, unitAmount: t.unit_amount, flatAmount: t.flat_amount ?? null })),
    })),
  };
}

function toUsageView(u: SubscriptionUsage): SubscriptionUsageResponse {
  return {
    subscription_id: u.subscriptionId,
    customer_id: u.customerId,
    currency: u.currency,
    period_start: u.periodStart.toISOString(),
    period_end: u.periodEnd.toISOString(),
    as_of: u.asOf.toISOString(),
    amount: u.amount,
    items: u.items.map((i) => ({
      price_id: i.price.id,
      meter_id: i.price.meterId!,
      display_name: i.price.displayName,
      quantity: i.quantity,
      amount: i.amount,
      lines: i.lines.map((l) => ({ description: l.description, quantity: l.quantity, unit_amount: l.unitAmount, amount: l.amount })),
    })),
  };
}

export function mountSubscriptionRoutes(app: Express, subscriptions: SubscriptionService, usage: UsageService, logger: Logger): void {
  mountRoute(
    app,
    billingApi.createSubscription,
    async ({ body, ctx }) => toSubscriptionView(await subscriptions.create(eventContextOf(ctx), newSubscriptionOf(body))),
    logger,
  );
  mountRoute(
    app,
    billingApi.listSubscriptions,
    async ({ query, ctx }) => {
      const page = await subscriptions.list(ctx, {
        customerId: query.customer_id,
        planId: query.plan_id,
        status: query.status,
        limit: query.limit,
        offset: query.offset,
      });
      return { items: page.items.map(toSubscriptionView), pagination: { total: page.total, limit: query.limit, offset: query.offset } };
    },
    logger,
  );
  mountRoute(app, billingApi.getSubscription, async ({ params, ctx }) => toSubscriptionView(await subscriptions.get(ctx, params.id)), logger);
  mountRoute(
    app,
    billingApi.activateSubscription,
    async ({ params, ctx }) => toSubscriptionView(await subscriptions.activate(eventContextOf(ctx), params.id)),
    logger,
  );
  mountRoute(
    app,
    billingApi.pauseSubscription,
    async ({ params, ctx }) => toSubscriptionView(await subscriptions.pause(eventContextOf(ctx), params.id)),
    logger,
  );
  mountRoute(
    app,
    billingApi.resumeSubscription,
    async ({ params, ctx }) => toSubscriptionView(await subscriptions.resume(eventContextOf(ctx), params.id)),
    logger,
  );
  mountRoute(
    app,
    billingApi.cancelSubscription,
    async ({ params, body, ctx }) => toSubscriptionView(await subscriptions.cancel(eventContextOf(ctx), params.id, body.cancel_at)),
    logger,
  );
  mountRoute(
    app,
    billingApi.subscriptionUsage,
    async ({ params, ctx }) => toUsageView(await usage.current(ctx, params.id, ctx.requestId)),
    logger,
  );
  mountRoute(
    app,
    billingApi.customerUsage,
    async ({ params, query, ctx }) => {
      const u = await usage.ofCustomer(ctx, params.id, query.include_children ?? false, ctx.requestId);
      return {
        customer_id: u.customerId,
        as_of: u.asOf.toISOString(),
        subscriptions: u.subscriptions.map((s) => {
          const { subscription_id, customer_id, currency, amount, items, period_start, period_end } = toUsageView(s);
          return { subscription_id, customer_id, currency, amount, items, period_start, period_end };
        }),
        totals: u.totals,
      };
    },
    logger,
  );
  mountRoute(
    app,
    billingPayersInternalApi.payingSubscriptions,
    async ({ params, ctx }) => {
      const paid = await subscriptions.payingFor(ctx, params.id);
      return { customer_id: params.id, subscription_ids: paid.ids, count: paid.count };
    },
    logger,
  );
}
