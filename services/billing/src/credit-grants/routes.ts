import type { Express } from 'express';
import { creditGrantApi, type CreateCreditGrantBody } from '@billstream/contracts';
import { mountRoute } from '@billstream/http';
import type { Logger } from '@billstream/logger';
import { exact } from '@billstream/money';
import type { NewCreditGrant } from './domain';
import type { CreditGrantService } from './service';
import { toApplicationView, toCreditGrantView } from './view';

function newCreditGrantOf(b: CreateCreditGrantBody): NewCreditGrant {
  return {
    planId: b.plan_id ?? null,
    subscriptionId: b.subscription_id ?? null,
    name: b.name,
    credits: exact(b.credits),
    cadence: b.cadence,
    period: b.period ?? null,
    expireInDays: b.expire_in_days ?? null,
    priority: b.priority ?? null,
    conversionRate: b.conversion_rate ? exact(b.conversion_rate) : null,
    metadata: b.metadata ?? {},
  };
}

export function mountCreditGrantRoutes(app: Express, grants: CreditGrantService, logger: Logger): void {
  mountRoute(app, creditGrantApi.createCreditGrant, async ({ body, ctx }) => toCreditGrantView(await grants.create(ctx, newCreditGrantOf(body))), logger);
  mountRoute(
    app,
    creditGrantApi.listCreditGrants,
    async ({ query, ctx }) => {
      const page = await grants.list(ctx, { planId: query.plan_id, subscriptionId: query.subscription_id, status: query.status, limit: query.limit, offset: query.offset });
      return { items: page.items.map(toCreditGrantView), pagination: { total: page.total, limit: query.limit, offset: query.offset } };
    },
    logger,
  );
  mountRoute(app, creditGrantApi.getCreditGrant, async ({ params, ctx }) => toCreditGrantView(await grants.get(ctx, params.id)), logger);
  mountRoute(app, creditGrantApi.archiveCreditGrant, async ({ params, ctx }) => grants.archive(ctx, params.id), logger);
  mountRoute(
    app,
    creditGrantApi.listCreditGrantApplications,
    async ({ params, query, ctx }) => {
      const page = await grants.applicationsOf(ctx, params.id, { subscriptionId: query.subscription_id, status: query.status, limit: query.limit, offset: query.offset });
      return { items: page.items.map(toApplicationView), pagination: { total: page.total, limit: query.limit, offset: query.offset } };
    },
    logger,
  );
}
