import { etagOf } from '@billstream/http';
import { toDecimalString } from '@billstream/money';
import type { Decimal } from 'decimal.js';
import type { AlertLevel, Wallet } from './domain';

function levelView(level: AlertLevel | undefined) {
  return level ? { threshold: toDecimalString(level.threshold), condition: level.condition } : undefined;
}

/** The wallet as clients see it (responses and event payloads). */
export function walletView(w: Wallet) {
  return {
    id: w.id,
    customer_id: w.customerId,
    currency: w.currency,
    wallet_type: w.walletType,
    wallet_status: w.walletStatus,
    balance: toDecimalString(w.creditBalance.times(w.conversionRate)),
    credit_balance: toDecimalString(w.creditBalance),
    conversion_rate: toDecimalString(w.conversionRate),
    topup_conversion_rate: toDecimalString(w.topupConversionRate),
    config: { allowed_price_types: [...w.allowedPriceTypes] },
    description: w.description,
    metadata: w.metadata,
    auto_topup: w.autoTopup && {
      enabled: w.autoTopup.enabled,
      threshold: w.autoTopup.threshold && toDecimalString(w.autoTopup.threshold),
      amount: w.autoTopup.amount && toDecimalString(w.autoTopup.amount),
      invoicing: w.autoTopup.invoicing,
    },
    alert_settings: w.alertSettings && {
      alert_enabled: w.alertSettings.alertEnabled,
      ...(w.alertSettings.critical ? { critical: levelView(w.alertSettings.critical) } : {}),
      ...(w.alertSettings.warning ? { warning: levelView(w.alertSettings.warning) } : {}),
      ...(w.alertSettings.info ? { info: levelView(w.alertSettings.info) } : {}),
    },
    alert_state: w.alertState,
    tenant_id: w.tenantId,
    environment_id: w.environmentId,
    created_at: w.createdAt.toISOString(),
    updated_at: w.updatedAt.toISOString(),
  };
}
export type WalletView = ReturnType<typeof walletView>;

export function realTimeCreditBalance(w: Wallet): Decimal {
  return w.creditBalance.plus(w.pendingCredits).minus(w.pendingDebits);
}

export function balanceView(w: Wallet, breakdown: { free: Decimal; purchased: Decimal }, includeRealTime: boolean) {
  const realTime = realTimeCreditBalance(w);
  return {
    wallet_id: w.id,
    currency: w.currency,
    balance: toDecimalString(w.creditBalance.times(w.conversionRate)),
    credit_balance: toDecimalString(w.creditBalance),
    conversion_rate: toDecimalString(w.conversionRate),
    credits_available_breakdown: { purchased: toDecimalString(breakdown.purchased), free: toDecimalString(breakdown.free) },
    ...(includeRealTime
      ? { real_time_balance: toDecimalString(realTime.times(w.conversionRate)), real_time_credit_balance: toDecimalString(realTime) }
      : {}),
  };
}

/** Strong ETag of a wallet's state; PATCH with a stale If-Match gives 409 version_conflict. */
export function walletEtag(w: Wallet): string {
  return etagOf(w.version);
}
