import { etagOf } from '@billstream/http';
import { minorDigits } from '@billstream/contracts';
import { EXACT_ZERO, exact, toDecimalString } from '@billstream/money';
import Decimal from 'decimal.js';
import { countsUnbilledUsage, type AlertLevel, type Wallet } from './domain';

function levelView(level: AlertLevel | undefined) {
  return level ? { threshold: toDecimalString(level.threshold), condition: level.condition } : undefined;
}

/**
 * What a new hold or a debit can still take (docs/api/reservations.md): the real-time credit
 * balance, never more than credit_balance (pending credits cannot be debited yet), less the
 * credits `held` by live reservations; never below 0.
 */
export function creditsAvailableOf(w: Wallet, held: Decimal): Decimal {
  const realTime = realTimeCreditBalance(w);
  const spendable = realTime.lessThan(w.creditBalance) ? realTime : w.creditBalance;
  const left = spendable.minus(held);
  return left.isNegative() ? EXACT_ZERO : left;
}

/** `credits_held` and `credits_available` of a read (left out when `held` is not known: event payloads). */
function heldView(w: Wallet, held: Decimal | undefined) {
  return held === undefined ? {} : { credits_held: toDecimalString(held), credits_available: toDecimalString(creditsAvailableOf(w, held)) };
}

/** The wallet as clients see it (responses and event payloads); `held`: credits of its live reservations, on reads. */
export function walletView(w: Wallet, held?: Decimal) {
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
    ...heldView(w, held),
    tenant_id: w.tenantId,
    environment_id: w.environmentId,
    created_at: w.createdAt.toISOString(),
    updated_at: w.updatedAt.toISOString(),
  };
}
export type WalletView = ReturnType<typeof walletView>;

/** Decimals of the unbilled usage's worth in credits (as the credits debited for an invoice). */
const UNBILLED_CREDIT_DECIMALS = 12;

/** The unbilled usage (ADR 0024) the wallet's real-time balance takes off, in major units of its currency. */
export function unbilledUsageOf(w: Wallet): Decimal {
  if (!countsUnbilledUsage(w) || w.unbilledUsage.isZero()) return EXACT_ZERO;
  return w.unbilledUsage.dividedBy(exact(10).pow(minorDigits(w.currency)));
}

/**
 * Credits plus pending credits, minus pending debits, minus the unbilled usage ÷ conversion_rate
 * (rounded up to 12 decimals: the estimate never shows more credits than are left).
 */
export function realTimeCreditBalance(w: Wallet): Decimal {
  const base = w.creditBalance.plus(w.pendingCredits).minus(w.pendingDebits);
  const unbilled = unbilledUsageOf(w);
  if (unbilled.isZero()) return base;
  return base.minus(unbilled.dividedBy(w.conversionRate).toDecimalPlaces(UNBILLED_CREDIT_DECIMALS, Decimal.ROUND_UP));
}

export function balanceView(w: Wallet, breakdown: { free: Decimal; purchased: Decimal }, includeRealTime: boolean, held?: Decimal) {
  const realTime = realTimeCreditBalance(w);
  const counted = countsUnbilledUsage(w);
  return {
    wallet_id: w.id,
    currency: w.currency,
    balance: toDecimalString(w.creditBalance.times(w.conversionRate)),
    credit_balance: toDecimalString(w.creditBalance),
    conversion_rate: toDecimalString(w.conversionRate),
    credits_available_breakdown: { purchased: toDecimalString(breakdown.purchased), free: toDecimalString(breakdown.free) },
    ...heldView(w, held),
    ...(includeRealTime
      ? {
          // The money balance takes off the unbilled usage exactly; the credit balance its worth in credits.
          real_time_balance: toDecimalString(
            w.creditBalance.plus(w.pendingCredits).minus(w.pendingDebits).times(w.conversionRate).minus(unbilledUsageOf(w)),
          ),
          real_time_credit_balance: toDecimalString(realTime),
          unbilled_usage: counted ? w.unbilledUsage.toNumber() : 0,
          as_of: counted && w.unbilledAsOf ? w.unbilledAsOf.toISOString() : null,
        }
      : {}),
  };
}

/** Strong ETag of a wallet's state; PATCH with a stale If-Match gives 409 version_conflict. */
export function walletEtag(w: Wallet): string {
  return etagOf(w.version);
}
