import { ValidationError } from '@billstream/errors';
import type { BillingPeriod } from '../periods';
import type { Price } from '../prices/domain';

export interface Terms {
  currency: string;
  billingPeriod: BillingPeriod;
  billingPeriodCount: number;
  prices: Price[];
}

function only<T>(values: T[], field: string, what: string): T {
  const distinct = [...new Set(values)];
  if (distinct.length === 1) return distinct[0];
  throw new ValidationError(`The plan's active prices have several ${what} (${distinct.join(', ')}); choose one with ${field}`, {
    field,
    choices: distinct,
  });
}

/**
 * What a new subscription bills: the plan's active prices of one currency and one billing
 * period. Either given, or the plan's only one; several and none given, or none matching: 400.
 */
export function termsOf(planId: string, active: Price[], currency?: string, billingPeriod?: BillingPeriod): Terms {
  if (active.length === 0) throw new ValidationError(`Plan ${planId} has no active prices to bill`, { field: 'plan_id', plan_id: planId });
  const inCurrency = currency === undefined ? active : active.filter((p) => p.currency === currency);
  if (inCurrency.length === 0) throw new ValidationError(`Plan ${planId} has no active price in ${currency}`, { field: 'currency' });
  const chosenCurrency = currency ?? only(inCurrency.map((p) => p.currency), 'currency', 'currencies');
  const ofCurrency = inCurrency.filter((p) => p.currency === chosenCurrency);
  const inPeriod = billingPeriod === undefined ? ofCurrency : ofCurrency.filter((p) => p.billingPeriod === billingPeriod);
  if (inPeriod.length === 0) {
    throw new ValidationError(`Plan ${planId} has no active ${chosenCurrency} price billed ${billingPeriod}`, { field: 'billing_period' });
  }
  const period = billingPeriod ?? only(inPeriod.map((p) => p.billingPeriod), 'billing_period', 'billing periods');
  const prices = inPeriod.filter((p) => p.billingPeriod === period);
  const count = only(prices.map((p) => p.billingPeriodCount), 'billing_period', 'billing_period_count values');
  return { currency: chosenCurrency, billingPeriod: period, billingPeriodCount: count, prices };
}
