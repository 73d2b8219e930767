import type { PRICE_TYPES, WALLET_ALERT_STATES, WALLET_STATUSES, WALLET_TYPES } from '@billstream/contracts';
import type { Decimal } from 'decimal.js';

export type WalletType = (typeof WALLET_TYPES)[number];
export type WalletStatus = (typeof WALLET_STATUSES)[number];
export type AlertState = (typeof WALLET_ALERT_STATES)[number];
export type PriceType = (typeof PRICE_TYPES)[number];

/** Threshold and amount are set whenever `enabled` is true. */
export interface AutoTopup {
  enabled: boolean;
  threshold: Decimal | null;
  amount: Decimal | null;
  invoicing: boolean;
}

export interface AlertLevel {
  threshold: Decimal;
  condition: 'below';
}

export interface AlertSettings {
  alertEnabled: boolean;
  critical?: AlertLevel;
  warning?: AlertLevel;
  info?: AlertLevel;
}

export interface Wallet {
  id: string;
  tenantId: string;
  environmentId: string;
  customerId: string;
  currency: string;
  walletType: WalletType;
  walletStatus: WalletStatus;
  creditBalance: Decimal;
  /** Credits of the PENDING credit entries: what the real-time balance adds. */
  pendingCredits: Decimal;
  /** Credits of the PENDING debit entries: what the real-time balance takes off. */
  pendingDebits: Decimal;
  conversionRate: Decimal;
  topupConversionRate: Decimal;
  allowedPriceTypes: PriceType[];
  description: string | null;
  metadata: Record<string, string>;
  autoTopup: AutoTopup | null;
  alertSettings: AlertSettings | null;
  alertState: AlertState;
  ongoingAlertState: AlertState;
  /**
   * Unbilled usage charges of the customer in the wallet's currency, in minor units, as the
   * billing service last computed them (ADR 0024; kept in `unbilled_usage`, not on the wallet
   * row). Only a PRE_PAID wallet that allows USAGE takes them off its real-time balance.
   */
  unbilledUsage: Decimal;
  /** The time up to which that usage was read; null before the first computation. */
  unbilledAsOf: Date | null;
  /** The part of `unbilledUsage` that is usage lines of draft invoices: invoice id -> minor units. */
  unbilledInvoices: Record<string, number>;
  /** Number of completed balance movements so far; each one takes the next value. */
  ledgerSeq: number;
  version: number;
  createdAt: Date;
  updatedAt: Date;
}

/** Whether the wallet pays usage charges from its credits: its real-time balance counts unbilled usage. */
export function countsUnbilledUsage(w: Pick<Wallet, 'walletType' | 'allowedPriceTypes'>): boolean {
  return w.walletType === 'PRE_PAID' && (w.allowedPriceTypes.includes('USAGE') || w.allowedPriceTypes.includes('ALL'));
}
