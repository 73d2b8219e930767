import { apiKeyApi } from '@billstream/contracts';
import type { RouteHandler } from '@billstream/http';
import type { GatewayHandlers } from '../handlers';
import { principalOf } from '../auth';
import { keyScopeOf, toView, type ApiKeyService } from './service';

const { create: createRoute, list: listRoute, revoke: revokeRoute } = apiKeyApi;

export function apiKeyHandlers(apiKeys: ApiKeyService): GatewayHandlers {
  const create: RouteHandler<typeof createRoute> = async ({ body, ctx, res }) => {
    const { key, record } = await apiKeys.create(
      {
        tenantId: ctx.tenantId,
        environmentId: body.environment_id ?? ctx.environmentId,
        name: body.name,
        permissions: body.permissions,
        createdBy: ctx.actor,
      },
      principalOf(res),
    );
    return { ...toView(record), key };
  };
  const list: RouteHandler<typeof listRoute> = async ({ query, res }) => {
    const { items, total } = await apiKeys.list(keyScopeOf(principalOf(res)), query.limit, query.offset);
    return { items: items.map(toView), pagination: { total, limit: query.limit, offset: query.offset } };
  };
  const revoke: RouteHandler<typeof revokeRoute> = async ({ params, res }) => {
    await apiKeys.revoke(keyScopeOf(principalOf(res)), params.id, principalOf(res));
  };
  return {
    [createRoute.operationId]: create,
    [listRoute.operationId]: list,
    [revokeRoute.operationId]: revoke,
  } as GatewayHandlers;
}
