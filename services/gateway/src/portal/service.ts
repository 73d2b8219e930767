import { createHash, randomBytes } from 'node:crypto';
import { HTTPS_ORIGIN, MAX_PORTAL_FRAME_ANCESTORS, PORTAL_SESSION_TTL, type CreatePortalSessionBody, type PortalSessionView } from '@billstream/contracts';
import type { Db } from '@billstream/db';
import { NotFoundError, UnauthenticatedError } from '@billstream/errors';
import { PORTAL_EMAIL_SESSION_SECONDS, verifyPortalEmailLink, type RequestContext } from '@billstream/http';
import { newId } from '@billstream/ids';
import { seg, type Owners } from './owners';
import type { PortalSessionRecord, PortalSessionStore } from './store';

/** A portal token: a recognisable prefix and 256 random bits; stored only as its SHA-256. */
export const PORTAL_TOKEN_PREFIX = 'bsp_';

export function generatePortalToken(): string {
  return PORTAL_TOKEN_PREFIX + randomBytes(32).toString('base64url');
}

export function hashPortalToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/**
 * The portal's address of a session: its (non-secret) id in the path, so the page is served with
 * that session's frame ancestors, and the token in the fragment: a browser never sends a fragment
 * to a server, nor in a Referer.
 */
export function portalUrl(base: string, sessionId: string, token: string): string {
  return `${base.replace(/\/+$/, '')}/portal/s/${sessionId}#token=${token}`;
}

/** What a session id looks like (`psess_` and a ULID): anything else is never looked up. */
export const PORTAL_SESSION_ID = /^psess_[0-9A-HJKMNP-TV-Z]{26}$/;

/** The tenant's `portal.frame_ancestors` (billing settings, validated there), kept only as https origins, at most 10. */
function frameAncestorsOf(settings: { portal?: { frame_ancestors?: unknown } } | undefined): string[] {
  const list = settings?.portal?.frame_ancestors;
  if (!Array.isArray(list)) return [];
  return list.filter((o): o is string => typeof o === 'string' && HTTPS_ORIGIN.test(o)).slice(0, MAX_PORTAL_FRAME_ANCESTORS);
}

/** Opens, revokes and resolves portal sessions (ADR 0069). */
export class PortalSessionService {
  constructor(
    private readonly db: Db,
    private readonly store: PortalSessionStore,
    private readonly owners: Owners,
    private readonly clock: () => number = Date.now,
  ) {}

  /** A session for a customer of the caller's environment (404 when it has none of that id); the URL holds the token, shown once. */
  async create(ctx: RequestContext, customerId: string, body: CreatePortalSessionBody, base: string): Promise<PortalSessionView> {
    // The gateway's own read: the caller needs portal:write, not customers:read, to open a session.
    const own: RequestContext = { tenantId: ctx.tenantId, environmentId: ctx.environmentId, actor: ctx.actor, requestId: ctx.requestId };
    const customer = await this.owners.get<{ id: string }>('customer', own, `/v1/customers/${seg(customerId)}`);
    if (!customer) throw new NotFoundError(`Customer ${customerId} not found`, { field: 'id', id: customerId });
    // Who may frame the page: the tenant's setting now, snapshotted onto the session (ADR 0069 item 6).
    const settings = await this.owners.get<{ portal?: { frame_ancestors?: unknown } }>('billing', own, '/v1/settings/billing');
    const token = generatePortalToken();
    const expiresAt = new Date(this.clock() + (body.expires_in ?? PORTAL_SESSION_TTL.default) * 1000);
    const record = await this.store.insert(this.db, {
      id: newId('portalSession'),
      tenantId: ctx.tenantId,
      environmentId: ctx.environmentId,
      customerId: customer.id,
      tokenHash: hashPortalToken(token),
      returnUrl: body.return_url ?? null,
      frameAncestors: frameAncestorsOf(settings),
      createdBy: ctx.actor,
      expiresAt,
    });
    return { id: record.id, url: portalUrl(base, record.id, token), expires_at: record.expiresAt.toISOString() };
  }

  /**
   * A one-hour session for the customer an invoice email's signed link names (ADR 0067): 401 when
   * the link is not one billing signed or has expired, or its customer is gone. The token is
   * answered to the page that opened the link, never in a URL.
   */
  async openFromEmail(key: Buffer, link: string, requestId: string): Promise<{ token: string; expires_at: string } | undefined> {
    const claims = verifyPortalEmailLink(key, link, this.clock());
    if (!claims) return undefined;
    if (claims === 'expired') throw new UnauthenticatedError('This portal link has expired: open the link of a newer invoice email, or ask the seller for a new one');
    const ctx: RequestContext = { tenantId: claims.tenantId, environmentId: claims.environmentId, actor: 'portal-email-link', requestId };
    const customer = await this.owners.get<{ id: string }>('customer', ctx, `/v1/customers/${seg(claims.customerId)}`);
    if (!customer) return undefined;
    const token = generatePortalToken();
    const record = await this.store.insert(this.db, {
      id: newId('portalSession'),
      tenantId: claims.tenantId,
      environmentId: claims.environmentId,
      customerId: customer.id,
      tokenHash: hashPortalToken(token),
      returnUrl: null,
      // Opened at /portal/ (the email's link names no session): framed nowhere.
      frameAncestors: [],
      createdBy: 'portal-email-link',
      expiresAt: new Date(this.clock() + PORTAL_EMAIL_SESSION_SECONDS * 1000),
    });
    return { token, expires_at: record.expiresAt.toISOString() };
  }

  async revoke(ctx: RequestContext, id: string): Promise<void> {
    const revoked = await this.store.revoke(this.db, ctx, id);
    if (!revoked) throw new NotFoundError(`Portal session ${id} not found`, { field: 'id', id });
  }

  /**
   * The origins that may frame the page of a session id: its snapshot while it is live, none when
   * the id is malformed, unknown, expired or revoked (the page is the same either way).
   */
  async frameAncestors(id: string): Promise<string[]> {
    if (!PORTAL_SESSION_ID.test(id)) return [];
    const record = await this.store.findById(this.db, id);
    if (!record || record.revokedAt || record.expiresAt.getTime() <= this.clock()) return [];
    return record.frameAncestors;
  }

  /**
   * The live session of a token, else undefined (unknown, expired or revoked). Looked up on
   * every call, never cached: a revocation counts at once on every gateway.
   */
  async resolve(token: string): Promise<PortalSessionRecord | undefined> {
    if (!token.startsWith(PORTAL_TOKEN_PREFIX) || token.length > 128) return undefined;
    const record = await this.store.findByHash(this.db, hashPortalToken(token));
    if (!record || record.revokedAt || record.expiresAt.getTime() <= this.clock()) return undefined;
    return record;
  }
}
