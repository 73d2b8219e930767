import type { Decimal } from 'decimal.js';
import type { CreditReason, LedgerEntry } from '../entries/domain';
import type { PriceType } from '../wallets/domain';

/**
 * A credit another service asks for by idempotency key (ADR 0039): into the customer's open
 * PRE_PAID wallet of the currency, created with `newWallet` when the customer has none.
 */
export interface CustomerCreditRequest {
  customerId: string;
  currency: string;
  /** Credits to add; null when `amount` is given. */
  credits: Decimal | null;
  /** Money in major units: credits = amount ÷ the wallet's rate (the existing wallet's, else the new one's), rounded up to 12 decimals. */
  amount: Decimal | null;
  reason: CreditReason;
  expiryDate: Date | null;
  priority: number | null;
  description: string | null;
  idempotencyKey: string;
  /** How a missing wallet is made; an existing wallet keeps its own rate and price types. */
  newWallet: { conversionRate: Decimal; allowedPriceTypes: PriceType[] };
}

export interface CustomerCredit {
  walletId: string;
  walletCreated: boolean;
  entry: LedgerEntry;
  /** True when the key had credited before: the stored credit is answered, nothing new. */
  replayed: boolean;
}

/** What `customer_credits` keeps of a credit made by key. */
export interface StoredCredit {
  walletId: string;
  transactionId: string;
  walletCreated: boolean;
  requestHash: string;
}

/**
 * Why a credit of a batch credited nothing (nothing is stored under its key): its expiry
 * passed, its customer is gone (both final), or the customer's PRE_PAID wallet is not active
 * (frozen: it may pass).
 */
export type CreditRefusal = 'expired' | 'customer_deleted' | 'wallet_not_active';

/** The outcome of one credit of a batch, in the order of the request. */
export type CustomerCreditOutcome = { status: 'credited'; credit: CustomerCredit } | { status: 'refused'; reason: CreditRefusal; field: string; message: string };
