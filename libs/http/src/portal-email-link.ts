import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

/**
 * The portal link of an invoice email (ADR 0067, ADR 0069): not a portal session, a signed entry
 * billing writes into the message and the gateway exchanges for a short session when the link is
 * opened. It names the tenant, environment and customer and expires `PORTAL_EMAIL_LINK_TTL_MS`
 * after the message was built; its key is derived from the internal token both services hold.
 */
export const PORTAL_EMAIL_LINK_TTL_MS = 7 * 86_400_000;
/** The session an email link opens lasts one hour (the default of a session the API opens). */
export const PORTAL_EMAIL_SESSION_SECONDS = 3600;

export interface PortalEmailLinkClaims {
  tenantId: string;
  environmentId: string;
  customerId: string;
  /** Unix milliseconds. */
  expiresAt: number;
}

export function portalEmailLinkKey(internalToken: string): Buffer {
  return Buffer.from(hkdfSync('sha256', internalToken, 'billstream', 'portal-email-links:v1', 32));
}

const mac = (key: Buffer, payload: string) => createHmac('sha256', key).update(`portal-email-link:v1\n${payload}`).digest('base64url');

/** The link's token: base64url of the claims, a dot, the MAC. */
export function signPortalEmailLink(key: Buffer, claims: PortalEmailLinkClaims): string {
  const payload = Buffer.from(JSON.stringify([claims.tenantId, claims.environmentId, claims.customerId, claims.expiresAt]), 'utf8').toString('base64url');
  return `${payload}.${mac(key, payload)}`;
}

/** The claims of a token signed with this key, else undefined; `expired` when its time is past. */
export function verifyPortalEmailLink(key: Buffer, token: string, now: number): PortalEmailLinkClaims | 'expired' | undefined {
  if (token.length > 2048) return undefined;
  const [payload, given, extra] = token.split('.');
  if (!payload || !given || extra !== undefined) return undefined;
  const want = Buffer.from(mac(key, payload));
  const got = Buffer.from(given);
  if (want.length !== got.length || !timingSafeEqual(want, got)) return undefined;
  try {
    const [tenantId, environmentId, customerId, expiresAt] = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as [string, string, string, number];
    if (typeof tenantId !== 'string' || typeof environmentId !== 'string' || typeof customerId !== 'string' || typeof expiresAt !== 'number') return undefined;
    return expiresAt <= now ? 'expired' : { tenantId, environmentId, customerId, expiresAt };
  } catch {
    return undefined;
  }
}

/** The portal's address with the email link in the fragment (never sent to a server, nor in a Referer). */
export function portalEmailLinkUrl(base: string, token: string): string {
  return `${base.replace(/\/+$/, '')}/portal/#email=${token}`;
}
