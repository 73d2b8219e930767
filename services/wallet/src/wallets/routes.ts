import type { Express } from 'express';
import { walletApi } from '@billstream/contracts';
import { HttpResult, mountRoute } from '@billstream/http';
import type { Logger } from '@billstream/logger';
import { exact } from '@billstream/money';
import { alertSettingsFromBody, autoTopupFromBody, parseTimestamp } from './input';
import type { WalletService } from './service';
import { balanceView, walletEtag, walletView } from './view';

export function mountWalletRoutes(app: Express, wallets: WalletService, logger: Logger): void {
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
      return new HttpResult(walletView(wallet), 201, { etag: walletEtag(wallet) });
    },
    logger,
  );

  mountRoute(
    app,
    walletApi.get,
    async ({ params, ctx }) => {
      const wallet = await wallets.get(ctx, params.id);
      return new HttpResult(walletView(wallet), 200, { etag: walletEtag(wallet) });
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
      return new HttpResult(walletView(wallet), 200, { etag: walletEtag(wallet) });
    },
    logger,
  );

  mountRoute(app, walletApi.terminate, async ({ params, ctx }) => walletView(await wallets.terminate(ctx, params.id)), logger);

  mountRoute(
    app,
    walletApi.balance,
    async ({ params, query, ctx }) => {
      const { wallet, breakdown } = await wallets.balance(ctx, params.id);
      return balanceView(wallet, breakdown, query.include_real_time_balance ?? false);
    },
    logger,
  );

  mountRoute(
    app,
    walletApi.listByCustomer,
    async ({ params, query, ctx }) => {
      const page = { limit: query.limit, offset: query.offset };
      const { items, total } = await wallets.listByCustomer(ctx, params.id, page);
      return { items: items.map(walletView), pagination: { total, ...page } };
    },
    logger,
  );
}
