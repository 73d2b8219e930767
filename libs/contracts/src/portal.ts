import { z } from 'zod';
import { paginationQuery } from './common';
import { defineRoute } from './routes';

/**
 * The customer portal (docs/api/portal.md, ADR 0069): sessions an API key with `portal:write`
 * opens for one customer, and the read-only portal API (`/v1/portal/...`) their tokens call.
 */
const id = z.string().min(1, 'must not be empty').max(255, 'must be at most 255 characters');
const tag = 'Customer portal';

/** Seconds a session lasts: 60 to 86400, 3600 when not given. */
export const PORTAL_SESSION_TTL = { min: 60, max: 86_400, default: 3600 } as const;

export const createPortalSessionBody = z
  .strictObject({
    expires_in: z
      .number()
      .int('must be a whole number of seconds')
      .min(PORTAL_SESSION_TTL.min, `must be between ${PORTAL_SESSION_TTL.min} and ${PORTAL_SESSION_TTL.max} seconds`)
      .max(PORTAL_SESSION_TTL.max, `must be between ${PORTAL_SESSION_TTL.min} and ${PORTAL_SESSION_TTL.max} seconds`)
      .optional(),
    return_url: z
      .string()
      .max(2048, 'must be at most 2048 characters')
      .refine((u) => /^https:\/\/[^\s/?#]+[^\s]*$/.test(u) && URL.canParse(u), 'must be an https URL')
      .optional(),
  })
  .meta({ examples: [{ expires_in: 3600, return_url: 'https://app.example.com/account' }] });
export type CreatePortalSessionBody = z.output<typeof createPortalSessionBody>;

export const portalSessionSchema = z
  .object({
    id: z.string().meta({ description: 'psess_ and a ULID' }),
    url: z.string().meta({ description: 'The portal with the session token in the fragment (`/portal/#token=...`): hand it to the customer, it is shown once' }),
    expires_at: z.string(),
  })
  .meta({ id: 'PortalSession' });
export type PortalSessionView = z.output<typeof portalSessionSchema>;

export const portalApi = {
  createSession: defineRoute({
    operationId: 'createPortalSession',
    method: 'post',
    path: '/v1/customers/:id/portal_sessions',
    service: 'gateway',
    permission: 'portal:write',
    summary: "Open a portal session for a customer (and its descendants): a URL of the read-only portal, its token in the fragment; expires after expires_in seconds",
    tag,
    params: z.strictObject({ id }),
    body: createPortalSessionBody,
    response: portalSessionSchema,
    status: 201,
    errors: [404],
  }),
  revokeSession: defineRoute({
    operationId: 'revokePortalSession',
    method: 'delete',
    path: '/v1/portal_sessions/:id',
    service: 'gateway',
    permission: 'portal:write',
    summary: 'Revoke a portal session: its token answers 401 from then on',
    tag,
    params: z.strictObject({ id }),
    status: 204,
    errors: [404],
  }),
};

export const portalSessionRoutes = Object.values(portalApi);

/** The portal API's list query: a page of the owner's list. */
export const portalListQuery = z.strictObject({ ...paginationQuery });
/** The portal API's queries without parameters. */
export const portalNoQuery = z.strictObject({});
export const portalIdParams = z.strictObject({ id });

/**
 * The read-only routes of the portal API (docs/api/portal.md), authenticated by a portal token
 * (`Authorization: Bearer`), never by an API key: the gateway answers them itself, not through
 * the route registry (they need no permission; the session names the customer).
 */
export const PORTAL_API_PATHS = {
  session: '/v1/portal/session',
  invoices: '/v1/portal/invoices',
  invoice: '/v1/portal/invoices/:id',
  creditNotes: '/v1/portal/credit_notes',
  subscriptions: '/v1/portal/subscriptions',
  usage: '/v1/portal/usage',
  wallets: '/v1/portal/wallets',
  walletTransactions: '/v1/portal/wallets/:id/transactions',
  entitlements: '/v1/portal/entitlements',
} as const;
