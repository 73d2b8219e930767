import type { Express } from 'express';
import { walletApi } from '@billstream/contracts';
import { HttpResult, mountRoute } from '@billstream/http';
import type { Logger } from '@billstream/logger';
import { EXACT_ZERO, exact } from '@billstream/money';
import type { Decimal } from 'decimal.js';
import { alertSettingsFromBody, autoTopupFromBody, parseTimestamp } from './input';
import type { WalletService } from './service';
import { balanceView, walletEtag, walletView } from './view';

/** Credits held by the live reservations of wallets (wallet id -> credits; 0 when none). */
export type HeldCredits = (walletIds: string[]) => Promise<Map<string, Decimal>>;

export function mountWalletRoutes(app: Express, wallets: WalletService, held: HeldCredits, logger: Logger): void {
  const heldOf = async (walletId: string) => (await held([walletId])).get(walletId) ?? EXACT_ZERO;
  mountRoute(
    app,
    walletApi.create,
    async ({ body, ctx }) => {
      const initial = body.initial_credits_to_load ? exact(body.initial_credits_to_load) : null;
      const wallet = await wallets.create(ctx, {
        customerId: body.customer_id,
        currency: body.currency,
        walletType: body.wallet_type,
        conversionRate: exact(body.conversion_rate),
        topupConversionRate: body.topup_conversion_rate ? exact(body.topup_conversion_rate) : null,
        initialCredits: initial && !initial.isZero() ? initial : null,
        initialCreditsExpiry: body.initial_credits_expiry_date_utc ? parseTimestamp(body.initial_credits_expiry_date_utc) : null,
        description: body.description ?? null,
        metadata: body.metadata ?? {},
        autoTopup: body.auto_topup ? autoTopupFromBody(body.auto_topup) : null,
        alertSettings: body.alert_settings ? alertSettingsFromBody(body.alert_settings) : null,
        allowedPriceTypes: body.config?.allowed_price_types ?? null,
      });
      return new HttpResult(walletView(wallet, EXACT_ZERO), 201, { etag: walletEtag(wallet) });
    },
    logger,
  );

  mountRoute(
    app,
    walletApi.get,
    async ({ params, ctx }) => {
      const wallet = await wallets.get(ctx, params.id);
      return new HttpResult(walletView(wallet, await heldOf(wallet.id)), 200, { etag: walletEtag(wallet) });
    },
    logger,
  );

  mountRoute(
    app,
    walletApi.update,
    async ({ params, body, ctx, req }) => {
      const wallet = await wallets.update(ctx, params.id, {
        autoTopup: body.auto_topup === undefined ? undefined : body.auto_topup && autoTopupFromBody(body.auto_topup),
        alertSettings:
          body.alert_settings === undefined ? undefined : body.alert_settings && alertSettingsFromBody(body.alert_settings),
        description: body.description,
        metadata: body.metadata,
        walletStatus: body.wallet_status,
        ifMatch: req.header('if-match') ?? undefined,
      });
      return new HttpResult(walletView(wallet, await heldOf(wallet.id)), 200, { etag: walletEtag(wallet) });
    },
    logger,
  );

  mountRoute(app, walletApi.terminate, async ({ params, ctx }) => walletView(await wallets.terminate(ctx, params.id)), logger);

  mountRoute(
    app,
    walletApi.balance,
    async ({ params, query, ctx }) => {
      const { wallet, breakdown } = await wallets.balance(ctx, params.id);
      return balanceView(wallet, breakdown, query.include_real_time_balance ?? false, await heldOf(wallet.id));
    },
    logger,
  );

  mountRoute(
    app,
    walletApi.listByCustomer,
    async ({ params, query, ctx }) => {
      const page = { limit: query.limit, offset: query.offset };
      const { items, total } = await wallets.listByCustomer(ctx, params.id, page);
      const holds = await held(items.map((w) => w.id));
      return { items: items.map((w) => walletView(w, holds.get(w.id))), pagination: { total, ...page } };
    },
    logger,
  );
}
