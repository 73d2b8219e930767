/** The billing service's configuration and the handle it answers (its use cases, for tests of the service alone; ADR 0063). */
import type { Subscription as BusSubscription } from '@billstream/bus';
import type { Service, ServiceDeps } from '@billstream/runtime';
import type { BillingSettings } from '../config';
import type { CustomerLookup } from '../clients/customers/domain';
import type { CreditGrantService } from '../credit-grants/service';
import type { CreditNoteService } from '../credit-notes/service';
import type { ThresholdBilling } from '../invoices/thresholds';
import type { PlanChangeService } from '../plan-changes/service';
import type { CouponService } from '../coupons/service';
import type { Meters } from '../clients/meters/domain';
import type { PlanService } from '../plans/service';
import type { PriceService } from '../prices/service';
import type { PeriodJob } from '../renewals/period-job';
import type { SubscriptionService } from '../subscriptions/service';
import type { InvoiceFinalizer } from '../invoices/finalizer';
import type { PaymentService } from '../payments/service';
import type { TopupInvoicer } from '../topups/invoicer';
import type { WalletCredits, Wallets } from '../clients/wallets/domain';
import type { TaskService } from '../tasks/service';
import type { UnbilledRefresher } from '../unbilled/refresher';
import type { EmailSender } from '../communications/sender';

export type Url = string | (() => string | undefined);

export interface BillingServiceConfig {
  internalToken: string;
  /** Base URL of the customer service (or a getter, when it is known only once it listens). */
  customerServiceUrl: Url;
  /** Base URL of the ingestion-aggregator, whose meter API gives usage. */
  ingestionServiceUrl: Url;
  /** Base URL of the wallet service (credits on invoices, CREDITS payments, invoiced top-ups). */
  walletServiceUrl: Url;
  /** Period job interval and renewal notice; default from `env` (BILLING_INTERVAL_MS, SUBSCRIPTION_RENEWAL_NOTICE_DAYS). */
  settings?: Partial<BillingSettings>;
  env?: NodeJS.ProcessEnv;
  clock?: () => Date;
  /** Replace the HTTP clients (tests of the service alone). */
  customerLookup?: CustomerLookup;
  meters?: Meters;
  wallets?: Wallets;
  /** Replaces the wallet's credit by key (credit grants) in tests of the service alone. */
  walletCredits?: WalletCredits;
}

/**
 * The service and its use cases, for tests of the service alone (src/testing/): each member is
 * something a client, a job or a consumer does, never a store or a maker (ADR 0063).
 */
export interface BillingServiceHandle extends Service {
  plans: PlanService;
  prices: PriceService;
  subscriptions: SubscriptionService;
  /** The period job: one round of the "close a period" workflow (`runOnce`). */
  periods: Pick<PeriodJob, 'runOnce'>;
  invoices: InvoiceFinalizer;
  payments: PaymentService;
  /** A subscription's ended periods invoiced now (what the period job and any write of it do first). */
  invoiceEndedPeriods(subscriptionId: string, requestId: string): Promise<unknown>;
  /** Progressive billing (ADR 0046): the threshold checks of a subscription, and of customers whose usage was recorded. */
  thresholds: Pick<ThresholdBilling, 'check' | 'checkCustomers'>;
  /** The customer-events consumer on `bus` (its group's subscription, to stop). */
  consumeCustomerEvents(bus: ServiceDeps['bus']): Promise<BusSubscription>;
  /** Invoiced top-ups (the wallet-events consumer's work, callable directly by tests). */
  topups: TopupInvoicer;
  /** Export and import tasks (ADR 0019). */
  tasks: TaskService;
  /** Unbilled usage for the wallets' real-time balances (ADR 0024): a customer noted, the notes flushed, the sweep. */
  unbilled: Pick<UnbilledRefresher, 'touch' | 'flush' | 'sweep' | 'stop'>;
  /** Credit grants (ADR 0039). */
  creditGrants: CreditGrantService;
  /** Plan changes (ADR 0043). */
  planChanges: PlanChangeService;
  /** Coupons and discounts (ADR 0040). */
  coupons: CouponService;
  /** Credit notes (ADR 0041). */
  creditNotes: CreditNoteService;
  /** Invoice email (ADR 0067): one round of the sender (what each replica's job does). */
  emails: Pick<EmailSender, 'runOnce'>;
}
