import type { Request } from 'express';
import { portalApi } from '@billstream/contracts';
import type { RouteHandler } from '@billstream/http';
import type { GatewayHandlers } from '../handlers';
import type { PortalSessionService } from './service';

const { createSession, revokeSession } = portalApi;

/** The public address the portal's URL starts with: PUBLIC_BASE_URL, else the address this request came to. */
function baseOf(publicBaseUrl: string | undefined, req: Request): string {
  return publicBaseUrl ?? `${req.protocol}://${req.get('host') ?? '127.0.0.1'}`;
}

export function portalSessionHandlers(sessions: PortalSessionService, publicBaseUrl: string | undefined): GatewayHandlers {
  const create: RouteHandler<typeof createSession> = async ({ params, body, ctx, req }) => sessions.create(ctx, params.id, body, baseOf(publicBaseUrl, req));
  const revoke: RouteHandler<typeof revokeSession> = async ({ params, ctx }) => {
    await sessions.revoke(ctx, params.id);
  };
  return { [createSession.operationId]: create, [revokeSession.operationId]: revoke } as GatewayHandlers;
}
