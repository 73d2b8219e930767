import { Router, type NextFunction, type Request, type Response } from 'express';
import { PORTAL_API_PATHS as P, portalEmailSessionBody, portalIdParams, portalListQuery, portalNoQuery } from '@billstream/contracts';
import { NotFoundError, RateLimitedError, UnauthenticatedError } from '@billstream/errors';
import { parseOrThrow, parseQuery, type QueryParams } from '@billstream/http';
import type { CallerLimits } from '../auth';
import { sourceAddressOf } from '../source-address';
import { OwnerAnswer, seg, type Owners } from './owners';
import { scopeOf, type PortalScope } from './scope';
import type { PortalSessionService } from './service';
import { clean, inScope, remainingOf, type OwnerRecord } from './views';

const BEARER = /^Bearer\s+(\S+)\s*$/i;
type List<T = OwnerRecord> = { items: T[]; pagination: { total: number; limit: number; offset: number } };

const scopeOfRes = (res: Response) => res.locals.portal as PortalScope;
const list = (req: Request) => parseQuery(portalListQuery, req.query as QueryParams)!;
const none = (req: Request) => parseQuery(portalNoQuery, req.query as QueryParams);
const notFound = (what: string, id: string) => new NotFoundError(`${what} ${id} not found`, { field: 'id', id });

/**
 * The read-only portal API (docs/api/portal.md, ADR 0069) at /v1/portal: a portal token
 * (`Authorization: Bearer bsp_...`) names a session, the session a customer; every answer is
 * read from the owner's existing route with the session's tenant and environment and a filter
 * by that customer, and every record is checked to be of a customer the session reaches. An id
 * the caller sends is only ever looked up, then checked: another customer's record is 404.
 */
export function portalRouter(sessions: PortalSessionService, owners: Owners, limits: CallerLimits, trustedProxyHops: number, emailLinkKey: Buffer): Router {
  const router = Router();

  // An invoice email's portal link exchanged for a one-hour session (ADR 0067): the only portal
  // route without a portal token; a link that is not one billing signed takes from the failure budget.
  router.post(P.emailSession.replace('/v1/portal', ''), async (req: Request, res: Response) => {
    const { link } = parseOrThrow(portalEmailSessionBody, req.body ?? {}, 'Body');
    const opened = await sessions.openFromEmail(emailLinkKey, link, String(res.locals.requestId));
    if (!opened) {
      const wait = limits.failures.take(sourceAddressOf(req, trustedProxyHops));
      if (wait > 0) throw new RateLimitedError(wait, 'Too many requests without a valid portal link from this address');
      throw new UnauthenticatedError('Invalid portal link');
    }
    res.setHeader('Cache-Control', 'private, no-store');
    res.status(201).json(opened);
  });

  router.use(async (req: Request, res: Response, next: NextFunction) => {
    const address = sourceAddressOf(req, trustedProxyHops);
    const token = BEARER.exec(req.headers.authorization ?? '')?.[1];
    const session = token ? await sessions.resolve(token) : undefined;
    if (!session) {
      const wait = limits.failures.take(address);
      if (wait > 0) throw new RateLimitedError(wait, 'Too many requests without a valid portal token from this address');
      throw new UnauthenticatedError(token ? 'Invalid, expired or revoked portal session' : 'Missing portal token: send "Authorization: Bearer <portal token>"');
    }
    const wait = limits.tenants.take(session.tenantId);
    if (wait > 0) throw new RateLimitedError(wait);
    const scope = await scopeOf(owners, session, String(res.locals.requestId));
    if (!scope) throw new UnauthenticatedError("The portal session's customer no longer exists");
    res.locals.portal = scope;
    res.locals.ctx = scope.ctx;
    // Nothing of a customer's account is kept by a browser's or a proxy's cache.
    res.setHeader('Cache-Control', 'private, no-store');
    next();
  });

  /** One route: GET only (the portal is read only), its owner's non-data answers passed on as they are. */
  const get = (path: string, answer: (req: Request, scope: PortalScope) => Promise<unknown>) =>
    router.get(path.replace('/v1/portal', ''), async (req: Request, res: Response) => {
      try {
        res.status(200).json(await answer(req, scopeOfRes(res)));
      } catch (err) {
        if (!(err instanceof OwnerAnswer)) throw err;
        res.status(err.status).type('application/json').send(err.payload);
      }
    });

  get(P.session, async (req, scope) => {
    none(req);
    const settings = await owners.get<{ invoice_settings: Record<string, unknown> | null }>('billing', scope.ctx, '/v1/settings/billing');
    const brand = settings?.invoice_settings;
    return {
      session: { id: scope.session.id, expires_at: scope.session.expiresAt.toISOString(), return_url: scope.session.returnUrl },
      customer: scope.root,
      customers: scope.customers,
      branding: { company_name: brand?.company_name ?? null, logo_url: brand?.logo_url ?? null, accent_color: brand?.accent_color ?? null },
    };
  });

  /** A list the owner filters by the session's customer and its descendants (`include_children`). */
  const hierarchyList = async (req: Request, scope: PortalScope, path: string) => {
    const q = list(req);
    const page = await owners.get<List>('billing', scope.ctx, `${path}?customer_id=${seg(scope.root.id)}&include_children=true&limit=${q.limit}&offset=${q.offset}`);
    const items = (page?.items ?? []).filter((r) => inScope(scope.ids, r)).map(clean);
    return { items, pagination: page?.pagination ?? { total: 0, limit: q.limit, offset: q.offset } };
  };
  get(P.invoices, (req, scope) => hierarchyList(req, scope, '/v1/invoices'));
  get(P.creditNotes, (req, scope) => hierarchyList(req, scope, '/v1/credit_notes'));
  get(P.invoice, async (req, scope) => {
    none(req);
    const { id } = parseOrThrow(portalIdParams, req.params, 'Path');
    const invoice = await owners.get<OwnerRecord>('billing', scope.ctx, `/v1/invoices/${seg(id)}`);
    if (!invoice || !inScope(scope.ids, invoice)) throw notFound('Invoice', id);
    return clean(invoice);
  });

  /**
   * A page (limit, offset) of a list the owner answers per customer, over the customers of the
   * scope in order: one call per customer for its total, then one per customer whose records the
   * page reaches (a one-customer scope: the page itself). `pagination.total` is the sum.
   */
  const pagedAcross = async (req: Request, scope: PortalScope, path: (customerId: string, limit: number, offset: number) => string, service: 'billing' | 'wallet' | 'entitlements') => {
    const q = list(req);
    const read = (c: string, limit: number, offset: number) => owners.get<List>(service, scope.ctx, path(c, limit, offset));
    const tag = (c: string, page: List | undefined) => (page?.items ?? []).map((r): OwnerRecord => ({ ...r, customer_id: (r.customer_id as string | undefined) ?? c }));
    if (scope.customers.length === 1) {
      const c = scope.root.id;
      const page = await read(c, q.limit, q.offset);
      return { items: tag(c, page).filter((r) => inScope(scope.ids, r)), pagination: { total: page?.pagination.total ?? 0, limit: q.limit, offset: q.offset } };
    }
    const totals = await Promise.all(scope.customers.map(async (c) => (await read(c.id, 1, 0))?.pagination.total ?? 0));
    const slices: Array<{ c: string; limit: number; offset: number }> = [];
    let start = 0;
    scope.customers.forEach((c, i) => {
      const from = Math.max(q.offset, start);
      const to = Math.min(q.offset + q.limit, start + totals[i]!);
      if (to > from) slices.push({ c: c.id, limit: to - from, offset: from - start });
      start += totals[i]!;
    });
    const pages = await Promise.all(slices.map(async (s) => tag(s.c, await read(s.c, s.limit, s.offset))));
    return { items: pages.flat().filter((r) => inScope(scope.ids, r)), pagination: { total: start, limit: q.limit, offset: q.offset } };
  };

  get(P.subscriptions, async (req, scope) => {
    const page = await pagedAcross(req, scope, (c, l, o) => `/v1/subscriptions?customer_id=${seg(c)}&limit=${l}&offset=${o}`, 'billing');
    const subs = page.items;
    const planIds = [...new Set(subs.map((s) => String(s.plan_id)))];
    const plans = new Map(await Promise.all(planIds.map(async (id) => [id, await owners.maybe<{ name: string }>('billing', scope.ctx, `/v1/plans/${seg(id)}`)] as const)));
    const items = await Promise.all(
      subs.map(async (s) => {
        const live = s.status === 'active' || s.status === 'trialing';
        const upcoming = live ? await owners.maybe<Record<string, unknown>>('billing', scope.ctx, `/v1/subscriptions/${seg(s.id)}/upcoming-invoice`) : undefined;
        return { ...clean(s), plan_name: plans.get(String(s.plan_id))?.name ?? null, upcoming_invoice: upcoming ? clean(upcoming) : null };
      }),
    );
    return { items, pagination: page.pagination };
  });

  get(P.usage, async (req, scope) => {
    none(req);
    const usage = await owners.get<{ as_of: string; subscriptions: Array<Record<string, unknown>>; totals: unknown[] }>('billing', scope.ctx, `/v1/customers/${seg(scope.root.id)}/usage?include_children=true`);
    const found = (usage?.subscriptions ?? []).filter((s) => inScope(scope.ids, s));
    // Each meter's name, for the chart's labels (the meters are the seller's, read by id from the usage answer).
    const meterIds = [...new Set(found.flatMap((s) => (s.items as Array<{ meter_id: string }>).map((i) => i.meter_id)))];
    const names = new Map(await Promise.all(meterIds.map(async (id) => [id, (await owners.maybe<{ name: string }>('ingestion-aggregator', scope.ctx, `/v1/meters/${seg(id)}`))?.name ?? null] as const)));
    const subscriptions = found.map((s) => ({ ...s, items: (s.items as Array<{ meter_id: string }>).map((i) => ({ ...i, meter_name: names.get(i.meter_id) ?? null })) }));
    return { customer_id: scope.root.id, as_of: usage?.as_of ?? new Date().toISOString(), subscriptions, totals: usage?.totals ?? [] };
  });

  get(P.wallets, async (req, scope) => {
    const page = await pagedAcross(req, scope, (c, l, o) => `/v1/customers/${seg(c)}/wallets?limit=${l}&offset=${o}`, 'wallet');
    const items = await Promise.all(
      page.items.map(async (w) => {
        const balance = await owners.maybe<Record<string, unknown>>('wallet', scope.ctx, `/v1/wallets/${seg(w.id)}/balance?include_real_time_balance=true`);
        return { ...clean(w), balance: balance ? clean(balance as OwnerRecord) : null };
      }),
    );
    return { items, pagination: page.pagination };
  });

  // The live holds: reservations `held` on the wallets of the scope's customers (ADR 0068), newest first per customer.
  get(P.holds, async (req, scope) => {
    const page = await pagedAcross(req, scope, (c, l, o) => `/v1/reservations?customer_id=${seg(c)}&status=held&limit=${l}&offset=${o}`, 'wallet');
    return { items: page.items.map(clean), pagination: page.pagination };
  });

  get(P.walletTransactions, async (req, scope) => {
    const q = list(req);
    const { id } = parseOrThrow(portalIdParams, req.params, 'Path');
    const wallet = await owners.get<OwnerRecord>('wallet', scope.ctx, `/v1/wallets/${seg(id)}`);
    if (!wallet || !inScope(scope.ids, wallet)) throw notFound('Wallet', id);
    const page = await owners.get<List>('wallet', scope.ctx, `/v1/wallets/${seg(wallet.id)}/transactions?limit=${q.limit}&offset=${q.offset}`);
    return { items: (page?.items ?? []).map(clean), pagination: page?.pagination ?? { total: 0, limit: q.limit, offset: q.offset } };
  });

  get(P.entitlements, async (req, scope) => {
    const page = await pagedAcross(req, scope, (c, l, o) => `/v1/customers/${seg(c)}/entitlements?limit=${l}&offset=${o}`, 'entitlements');
    return { items: page.items.map((e) => ({ ...e, remaining: remainingOf(e.usage_limit, e.usage) })), pagination: page.pagination };
  });

  // Anything else under /v1/portal: 404 in the envelope (never on to the API key routes).
  router.use((req: Request) => {
    throw new NotFoundError(`No route for ${req.method} /v1/portal${req.path}`, { method: req.method, path: `/v1/portal${req.path}` });
  });
  return router;
}
