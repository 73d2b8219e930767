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
  /** Number of completed balance movements so far; each one takes the next value. */
  ledgerSeq: number;
  version: number;
  createdAt: Date;
  updatedAt: Date;
}
