import type { Express } from 'express';
import { webhookApi } from '@billstream/contracts';
import { etagOf, HttpResult, mountRoute } from '@billstream/http';
import type { Logger } from '@billstream/logger';
import { toEndpointView, type EndpointService } from './service';
import type { WebhookEndpoint } from './store';

function withEtag<T>(endpoint: WebhookEndpoint, body: T, status?: number): HttpResult<T> {
  return new HttpResult(body, status, { ETag: etagOf(endpoint.version) });
}

export function mountEndpointRoutes(app: Express, endpoints: EndpointService, logger: Logger): void {
  mountRoute(
    app,
    webhookApi.create,
    async ({ body, ctx }) => {
      const created = await endpoints.create(ctx, body);
      return withEtag(created, { ...toEndpointView(created), secret: created.secret });
    },
    logger,
  );
  mountRoute(
    app,
    webhookApi.list,
    async ({ query, ctx }) => {
      const { items, total } = await endpoints.list(ctx, { enabled: query.enabled }, query.limit, query.offset);
      return { items: items.map(toEndpointView), pagination: { total, limit: query.limit, offset: query.offset } };
    },
    logger,
  );
  mountRoute(
    app,
    webhookApi.get,
    async ({ params, ctx }) => {
      const endpoint = await endpoints.get(ctx, params.id);
      return withEtag(endpoint, toEndpointView(endpoint));
    },
    logger,
  );
  mountRoute(
    app,
    webhookApi.update,
    async ({ params, body, ctx, req }) => {
      const updated = await endpoints.update(ctx, params.id, body, req.header('if-match'));
      return withEtag(updated, toEndpointView(updated));
    },
    logger,
  );
  mountRoute(
    app,
    webhookApi.delete,
    async ({ params, ctx }) => {
      await endpoints.remove(ctx, params.id);
    },
    logger,
  );
}
