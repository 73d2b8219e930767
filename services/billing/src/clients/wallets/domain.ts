import type { Scope, UnbilledUsageBody } from '@billstream/contracts';

/** One line offered to the wallets: its id, price type and amount in minor units. */
export interface AllocationLine {
  id: string;
  price_type: 'FIXED' | 'USAGE';
  amount: number;
}

export interface AllocationRequest {
  customer_id: string;
  currency: string;
  /** The currency's minor digits (`minorDigits` of @billstream/contracts); `exponent` is its wire name. */
  exponent: number;
  lines: AllocationLine[];
  /** Answer what would be applied now, writing and debiting nothing (the upcoming invoice). */
  dry_run?: boolean;
}

/** What the wallet service took for one invoice (stored there, answered again on a repeat). */
export interface Allocation {
  invoice_id: string;
  status: 'allocated' | 'voided';
  prepaid: null | { wallet_id: string; transaction_id: string; credits: string; amount: number; lines: Array<{ id: string; amount: number }> };
  postpaid: null | { wallet_id: string; transaction_id: string; credits: string; amount: number };
}

export interface WalletPaymentRequest {
  payment_id: string;
  wallet_id: string;
  customer_id: string;
  currency: string;
  /** The currency's minor digits (`minorDigits`); `exponent` is its wire name. */
  exponent: number;
  amount: number;
}

export interface WalletPaymentResult {
  status: 'paid' | 'voided';
  transaction_id?: string;
  credits?: string;
}

/** What billing reads of a wallet to invoice a top-up of it (GET /v1/wallets/{id}). */
export interface WalletInfo {
  id: string;
  customer_id: string;
  currency: string;
  topup_conversion_rate: string;
}

/** What billing needs of the wallet service (ADR 0016); every call is idempotent on the invoice or payment id. */
export interface Wallets {
  allocate(scope: Scope, invoiceId: string, request: AllocationRequest, requestId: string): Promise<Allocation>;
  /**
   * Allocates many invoices of one tenant and environment in one wallet transaction, each once:
   * the answers in their order, each what `allocate` answers for it (the period job).
   */
  allocateMany(scope: Scope, invoices: Array<{ invoiceId: string; request: AllocationRequest }>, requestId: string): Promise<Allocation[]>;
  pay(scope: Scope, invoiceId: string, request: WalletPaymentRequest, requestId: string): Promise<WalletPaymentResult>;
  refund(scope: Scope, invoiceId: string, requestId: string): Promise<void>;
  wallet(scope: Scope, walletId: string, requestId: string): Promise<WalletInfo | undefined>;
  settle(scope: Scope, walletId: string, transactionId: string, status: 'COMPLETED' | 'FAILED', requestId: string): Promise<void>;
  /** Whether the wallet's PURCHASED_CREDIT_INVOICED credit is still PENDING (not settled by a client, nor failed by a termination). */
  isPendingInvoicedCredit(scope: Scope, walletId: string, transactionId: string, requestId: string): Promise<boolean>;
  /** Hands the customers' unbilled usage to the wallets' real-time balances (ADR 0024); an older `as_of` changes nothing. */
  reportUnbilled(scope: Scope, body: UnbilledUsageBody, requestId: string): Promise<void>;
}

/** A credit of a customer's PRE_PAID wallet by idempotency key (`POST /internal/v1/credits`, ADR 0039). */
export interface CustomerCreditRequest {
  customer_id: string;
  currency: string;
  /** Credits to add; or `amount`. */
  credits?: string;
  /** Money in major units: the wallet credits amount ÷ its rate, rounded up to 12 decimals. */
  amount?: string;
  transaction_reason: 'SUBSCRIPTION_CREDIT_GRANT' | 'CREDIT_NOTE';
  expiry_date: string | null;
  priority: number | null;
  description: string | null;
  idempotency_key: string;
  /** How a missing wallet is created; an existing one keeps its configuration. */
  wallet: { conversion_rate: string; allowed_price_types: Array<'USAGE' | 'FIXED' | 'ALL'> };
}

/**
 * The wallet's answer: `credited` (this call or the key's earlier one; the same transaction
 * whatever the number of calls), or `refused` for good: nothing was credited under the key and
 * nothing ever will be (the expiry passed; the customer is gone). Anything to retry (the wallet
 * service down, the wallet frozen) throws.
 */
export type CustomerCreditOutcome =
  | { kind: 'credited'; walletId: string; walletCreated: boolean; transactionId: string }
  | { kind: 'refused'; reason: 'expired' | 'customer_deleted'; message: string };

/**
 * One credit of a batch: `credit`'s outcomes, or `retry` when the wallet refused it for now
 * (the customer's PRE_PAID wallet is frozen): nothing stored under the key, to try again later.
 */
export type CustomerCreditBatchOutcome = CustomerCreditOutcome | { kind: 'retry'; message: string };

export interface WalletCredits {
  credit(scope: Scope, request: CustomerCreditRequest, requestId: string): Promise<CustomerCreditOutcome>;
  /**
   * Up to `MAX_CREDITS_PER_BATCH` credits of one tenant and environment in one call and one
   * wallet transaction (`POST /internal/v1/credits/batch`, ADR 0048): an outcome per request, in
   * order. A failure of the call as a whole (the wallet down, a 409 of one key) throws and
   * credits nothing.
   */
  creditMany(scope: Scope, requests: CustomerCreditRequest[], requestId: string): Promise<CustomerCreditBatchOutcome[]>;
}
