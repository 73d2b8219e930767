import type { EventContext } from '@billstream/outbox';
import type { Wallet } from '../wallets/domain';
import { newWallet } from '../wallets/service';
import type { CustomerCreditRequest } from './domain';

/** The PRE_PAID wallet a credit by key makes when its customer has none of the currency (ADR 0039), alone or in a batch (ADR 0048). */
export function prepaidWalletFor(ctx: EventContext, request: CustomerCreditRequest, now: Date): Wallet {
  return newWallet(
    ctx,
    {
      customerId: request.customerId,
      currency: request.currency,
      walletType: 'PRE_PAID',
      conversionRate: request.newWallet.conversionRate,
      topupConversionRate: null,
      description: null,
      metadata: {},
      autoTopup: null,
      alertSettings: null,
      allowedPriceTypes: request.newWallet.allowedPriceTypes,
    },
    now,
  );
}
