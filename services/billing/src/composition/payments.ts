/**
 * Payments, billing settings and dunning (ADR 0044): a paid invoiced top-up is settled; overdue
 * invoices are retried as PENDING PROVIDER payments, once per attempt by key.
 */
import type { Wallets } from '../clients/wallets/domain';
import { Dunning } from '../payments/dunning';
import { PaymentService } from '../payments/service';
import { SettingsService } from '../settings/service';
import type { TopupSettlement } from '../topups/settlement';
import type { CompositionBase } from './base';
import type { BillingStores } from './stores';

export interface Payments {
  payments: PaymentService;
  settings: SettingsService;
  dunning: Dunning;
}

export function composePayments({ db, logger, clock, published }: CompositionBase, { stores, wallets, settlement }: { stores: BillingStores; wallets: Wallets; settlement: TopupSettlement }): Payments {
  const payments = new PaymentService({ db, invoices: stores.invoices, payments: stores.payments, wallets, logger, clock, published, paid: settlement });
  const settings = new SettingsService(db, stores.settings, clock);
  const dunning = new Dunning({ db, settings: stores.settings, payments: stores.payments, service: payments, logger, clock });
  return { payments, settings, dunning };
}
