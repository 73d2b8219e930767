import { z } from 'zod';
import { listResponse, paginationQuery } from './common';
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
    url: z.string().meta({ description: 'The portal of this session, its id in the path and its token in the fragment (`/portal/s/{id}#token=...`): hand it to the customer, it is shown once; framed only by the `portal.frame_ancestors` of the billing settings when it was opened' }),
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
/** An invoice email's portal link (`/portal/#email=...`) to exchange for a session (ADR 0067). */
export const portalEmailSessionBody = z.strictObject({ link: z.string().min(1, 'must not be empty').max(2048, 'must be at most 2048 characters') });

/**
 * The read-only routes of the portal API (docs/api/portal.md), authenticated by a portal token
 * (`Authorization: Bearer`), never by an API key: the gateway answers them itself, not through
 * the route registry (they need no permission; the session names the customer).
 */
export const PORTAL_API_PATHS = {
  session: '/v1/portal/session',
  emailSession: '/v1/portal/email_sessions',
  invoices: '/v1/portal/invoices',
  invoice: '/v1/portal/invoices/:id',
  creditNotes: '/v1/portal/credit_notes',
  subscriptions: '/v1/portal/subscriptions',
  usage: '/v1/portal/usage',
  wallets: '/v1/portal/wallets',
  walletTransactions: '/v1/portal/wallets/:id/transactions',
  holds: '/v1/portal/holds',
  entitlements: '/v1/portal/entitlements',
} as const;

/** A record of an owner's list as the portal answers it: the owner's fields less the seller's internal ones (docs/api/portal.md). */
const record = (name: string, fields: Record<string, z.ZodType>) => z.looseObject({ id: z.string(), customer_id: z.string(), ...fields }).meta({ id: name });
const portalCustomer = z.object({ id: z.string(), external_id: z.string(), name: z.string().nullable(), email: z.string().nullable(), parent_customer_id: z.string().nullable() }).meta({ id: 'PortalCustomer' });
const portalInvoice = record('PortalInvoice', { invoice_number: z.string().nullable(), status: z.string(), currency: z.string(), total: z.number(), amount_due: z.number(), hosted_invoice_url: z.string().nullable(), invoice_pdf_url: z.string().nullable() });
const portalCreditNote = record('PortalCreditNote', { invoice_id: z.string(), status: z.string(), currency: z.string() });
const portalSubscription = record('PortalSubscription', { plan_id: z.string(), status: z.string(), plan_name: z.string().nullable(), upcoming_invoice: z.looseObject({ total: z.number(), currency: z.string() }).nullable() });
const portalWallet = record('PortalWallet', {
  currency: z.string(),
  wallet_status: z.string(),
  balance: z.looseObject({ balance: z.string(), credit_balance: z.string(), real_time_balance: z.string().optional(), real_time_credit_balance: z.string().optional() }).nullable(),
});
const portalHold = record('PortalHold', { wallet_id: z.string(), status: z.literal('held'), currency: z.string(), credits_held: z.string(), expires_at: z.string(), created_at: z.string() });
const portalTransaction = z.looseObject({ id: z.string(), type: z.string(), credit_amount: z.string().optional(), created_at: z.string() }).meta({ id: 'PortalWalletTransaction' });
const portalEntitlement = z
  .looseObject({ customer_id: z.string(), feature_lookup_key: z.string(), is_enabled: z.boolean(), usage_limit: z.string().nullable(), usage: z.string().nullable(), remaining: z.string().nullable() })
  .meta({ id: 'PortalEntitlement' });
const portalUsage = z
  .object({
    customer_id: z.string(),
    as_of: z.string(),
    subscriptions: z.array(z.looseObject({ subscription_id: z.string(), customer_id: z.string(), items: z.array(z.looseObject({ meter_id: z.string(), meter_name: z.string().nullable() })) })),
    totals: z.array(z.looseObject({ currency: z.string(), amount: z.number() })),
  })
  .meta({ id: 'PortalUsage' });
const portalSessionAnswer = z
  .object({
    session: z.object({ id: z.string(), expires_at: z.string(), return_url: z.string().nullable() }),
    customer: portalCustomer,
    customers: z.array(portalCustomer),
    branding: z.object({ company_name: z.string().nullable(), logo_url: z.string().nullable(), accent_color: z.string().nullable() }),
  })
  .meta({ id: 'PortalSessionContext' });

const portalRoute = <Q extends z.ZodType, R extends z.ZodType>(operationId: string, path: string, summary: string, response: R, query?: Q, params?: typeof portalIdParams) =>
  defineRoute<typeof portalIdParams, Q, z.ZodType, R>({ operationId, method: 'get', path, service: 'gateway', permission: 'portal:write', portal: 'token', summary, tag, response, status: 200, ...(query ? { query } : {}), ...(params ? { params } : {}) });

/** The portal API's routes, for the OpenAPI document only (the gateway mounts them itself, ADR 0069). */
export const PORTAL_API_ROUTES = [
  defineRoute({
    operationId: 'openPortalSessionFromEmail',
    method: 'post',
    path: PORTAL_API_PATHS.emailSession,
    service: 'gateway',
    permission: 'portal:write',
    portal: 'link',
    summary: "Exchange an invoice email's portal link (the `email` of `/portal/#email=...`) for a one-hour portal session; 401 when the link is not valid or has expired",
    tag,
    body: portalEmailSessionBody,
    response: z.object({ token: z.string().meta({ description: 'bsp_...: send as `Authorization: Bearer`' }), expires_at: z.string() }).meta({ id: 'PortalEmailSession' }),
    status: 201,
  }),
  portalRoute('getPortalSession', PORTAL_API_PATHS.session, "The session: its customer, the customers it reaches and the seller's branding", portalSessionAnswer, portalNoQuery),
  portalRoute('listPortalInvoices', PORTAL_API_PATHS.invoices, "The invoices of the session's customer and its descendants, with their hosted page and PDF links", listResponse(portalInvoice), portalListQuery),
  portalRoute('getPortalInvoice', PORTAL_API_PATHS.invoice, 'One invoice of the session (another customer\'s: 404)', portalInvoice, portalNoQuery, portalIdParams),
  portalRoute('listPortalCreditNotes', PORTAL_API_PATHS.creditNotes, "The credit notes of the session's customers", listResponse(portalCreditNote), portalListQuery),
  portalRoute('listPortalSubscriptions', PORTAL_API_PATHS.subscriptions, 'The subscriptions of the session, with their plan names and upcoming invoice', listResponse(portalSubscription), portalListQuery),
  portalRoute('getPortalUsage', PORTAL_API_PATHS.usage, 'Usage this period per meter, for the chart', portalUsage, portalNoQuery),
  portalRoute('listPortalWallets', PORTAL_API_PATHS.wallets, 'The wallets of the session with their balance and real-time balance', listResponse(portalWallet), portalListQuery),
  portalRoute('listPortalWalletTransactions', PORTAL_API_PATHS.walletTransactions, "A wallet's ledger (another customer's wallet: 404)", listResponse(portalTransaction), portalListQuery, portalIdParams),
  portalRoute('listPortalHolds', PORTAL_API_PATHS.holds, "The live holds: reservations held on the session's wallets", listResponse(portalHold), portalListQuery),
  portalRoute('listPortalEntitlements', PORTAL_API_PATHS.entitlements, 'The entitlements of the session, with what remains', listResponse(portalEntitlement), portalListQuery),
];
