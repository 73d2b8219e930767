/**
 * The real-time balance's composition (ADR 0024): usage-recorded notifications and a sweep
 * recompute customers' unbilled usage for the wallets; each batch's threshold checks first (ADR 0046).
 */
import type { Db } from '@billstream/db';
import type { Logger } from '@billstream/logger';
import type { Meters } from '../clients/meters/domain';
import type { Wallets } from '../clients/wallets/domain';
import type { BillingSettings } from '../config';
import type { CustomerStore } from '../customers/store';
import type { InvoiceMaker } from '../invoices/maker';
import type { ThresholdBilling } from '../invoices/thresholds';
import type { SubscriptionStore } from '../subscriptions/store';
import { UnbilledCalculator } from '../unbilled/calculator';
import { UnbilledRefresher } from '../unbilled/refresher';
import { UnbilledStore } from '../unbilled/store';

export function composeUnbilled(
  base: { db: Db; logger: Logger; clock: () => Date; settings: BillingSettings },
  parts: { subscriptions: SubscriptionStore; customers: CustomerStore; maker: InvoiceMaker; meters: Meters; wallets: Wallets; thresholds: Pick<ThresholdBilling, 'checkCustomers'> },
): UnbilledRefresher {
  const { db, logger, clock, settings } = base;
  const store = new UnbilledStore();
  return new UnbilledRefresher({
    db,
    store,
    calculator: new UnbilledCalculator({ db, subscriptions: parts.subscriptions, customers: parts.customers, maker: parts.maker, store, meters: parts.meters, clock }),
    sink: (scope, body, requestId) => parts.wallets.reportUnbilled(scope, body, requestId),
    logger,
    clock,
    settings: { debounceMs: settings.unbilledDebounceMs, sweepMs: settings.unbilledSweepMs },
    beforeCompute: (scope, customerIds, requestId) => parts.thresholds.checkCustomers(scope, customerIds, requestId),
  });
}
