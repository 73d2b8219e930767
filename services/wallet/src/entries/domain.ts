import {
  type CLIENT_DEBIT_REASONS,
  type CREDIT_REASONS,
  type SYSTEM_DEBIT_REASONS,
  type WALLET_TRANSACTION_STATUSES,
  type WALLET_TRANSACTION_TYPES,
} from '@billstream/contracts';
import type { Decimal } from 'decimal.js';

export type EntryType = (typeof WALLET_TRANSACTION_TYPES)[number];
export type EntryStatus = (typeof WALLET_TRANSACTION_STATUSES)[number];
export type CreditReason = (typeof CREDIT_REASONS)[number];
export type DebitReason = (typeof CLIENT_DEBIT_REASONS)[number] | (typeof SYSTEM_DEBIT_REASONS)[number];
export type EntryReason = CreditReason | DebitReason;

/** Free credits in the balance breakdown; every other credit counts as purchased. */
export const FREE_REASONS: readonly CreditReason[] = ['FREE_CREDIT_GRANT', 'SUBSCRIPTION_CREDIT_GRANT'];

export interface LedgerEntry {
  id: string;
  walletId: string;
  tenantId: string;
  environmentId: string;
  type: EntryType;
  status: EntryStatus;
  creditAmount: Decimal;
  amount: Decimal;
  creditBalanceBefore: Decimal;
  creditBalanceAfter: Decimal;
  creditsAvailable: Decimal;
  expiryDate: Date | null;
  priority: number | null;
  reason: EntryReason;
  description: string | null;
  idempotencyKey: string | null;
  requestHash: string | null;
  /** On a CREDIT_EXPIRED debit: the credit it expired. */
  expiredCreditId: string | null;
  /** Position in the wallet's ledger of completed movements; null while pending or failed. */
  ledgerSeq: number | null;
  createdAt: Date;
  updatedAt: Date;
}

/** A completed, unexpired credit that can pay a debit, with what orders its spending. */
export interface SpendableCredit {
  id: string;
  creditsAvailable: Decimal;
  priority: number | null;
  expiryDate: Date | null;
  createdAt: Date;
}

export interface EntryFilter {
  type?: EntryType;
  status?: EntryStatus;
  reason?: EntryReason;
  limit: number;
  offset: number;
}

export interface TopupInput {
  credits: Decimal;
  reason: CreditReason;
  expiryDate: Date | null;
  priority: number | null;
  description: string | null;
  idempotencyKey: string | null;
}

export interface DebitRequest {
  credits: Decimal;
  reason: DebitReason;
  description: string | null;
  idempotencyKey: string | null;
}

export interface MovementResult {
  entry: LedgerEntry;
  /** True when an idempotency key matched an earlier identical request. */
  replayed: boolean;
}
