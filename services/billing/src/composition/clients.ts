/**
 * The HTTP clients of the other services (customers, meters, wallets), or the replacements a
 * test of the service alone gives (ADR 0063), and the closing of their connections.
 */
import type { CustomerLookup } from '../clients/customers/domain';
import { HttpCustomerLookup } from '../clients/customers/http-lookup';
import type { Meters } from '../clients/meters/domain';
import { HttpMeters } from '../clients/meters/http-meters';
import type { WalletCredits, Wallets } from '../clients/wallets/domain';
import { HttpWallets } from '../clients/wallets/http-wallets';
import type { BillingServiceConfig, Url } from './handle';

export interface BillingClients {
  customerLookup: CustomerLookup;
  meters: Meters;
  wallets: Wallets;
  /** The wallet's credit by key (credit grants, excess credits, credit notes). */
  walletCredits: WalletCredits;
  close(): Promise<void>;
}

export const getter = (url: Url): (() => string | undefined) => (typeof url === 'string' ? () => url : url);

export function composeClients(config: BillingServiceConfig): BillingClients {
  const httpLookup = new HttpCustomerLookup(getter(config.customerServiceUrl), config.internalToken);
  const httpMeters = new HttpMeters(getter(config.ingestionServiceUrl), config.internalToken);
  const httpWallets = new HttpWallets(getter(config.walletServiceUrl), config.internalToken);
  return {
    customerLookup: config.customerLookup ?? httpLookup,
    meters: config.meters ?? httpMeters,
    wallets: config.wallets ?? httpWallets,
    walletCredits: config.walletCredits ?? httpWallets,
    async close() {
      await httpLookup.close();
      await httpMeters.close();
      await httpWallets.close();
    },
  };
}
