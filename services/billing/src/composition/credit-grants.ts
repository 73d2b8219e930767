/**
 * Credit grants' composition (ADR 0039): subscriptions bind them through the binder (the
 * SubscriptionGrants port); the applier credits the wallet by key.
 */
import type { WalletCredits } from '../clients/wallets/domain';
import { GrantApplier } from '../credit-grants/applier';
import { CreditGrantBinder } from '../credit-grants/binder';
import { CreditGrantService } from '../credit-grants/service';
import type { CompositionBase } from './base';
import type { BillingStores } from './stores';

export interface CreditGrants {
  binder: CreditGrantBinder;
  service: CreditGrantService;
}

export function composeCreditGrants({ db, logger, clock }: CompositionBase, { stores, walletCredits }: { stores: BillingStores; walletCredits: WalletCredits }): CreditGrants {
  const applier = new GrantApplier({ db, applications: stores.applications, wallets: walletCredits, logger, clock });
  const binder = new CreditGrantBinder({ db, grants: stores.grants, applications: stores.applications, subscriptions: stores.subscriptions, applier, logger, clock });
  const service = new CreditGrantService({ db, grants: stores.grants, applications: stores.applications, plans: stores.plans, subscriptions: stores.subscriptions, binder, clock });
  return { binder, service };
}
