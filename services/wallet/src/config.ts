import { env, loadConfig } from '@billstream/config';
import { z } from 'zod';

const debitConcurrency = z.coerce.number().int().min(1).optional();

/** Variables of the wallet service beyond the common ones. */
export const walletEnv = {
  CUSTOMER_SERVICE_URL: z.string().url('must be the base URL of the customer service'),
  /** Holds of METERED entitlements ask the entitlement check's quota (ADR 0070); unset: such holds answer 503. */
  ENTITLEMENTS_SERVICE_URL: z.string().url('must be the base URL of the entitlements service').optional(),
  /** Commits by quantity or usage event read meters and stored events of the ingestion-aggregator (ADR 0070); unset: they answer 503. */
  INGESTION_SERVICE_URL: z.string().url('must be the base URL of the ingestion-aggregator').optional(),
  WALLET_EXPIRY_INTERVAL_MS: env.int(60_000, 0),
  /** Debit group commits (database transactions of debits) that run at once in one instance; default 2 (the second after WALLET_DEBIT_OVERLAP_MS). */
  WALLET_DEBIT_CONCURRENCY: debitConcurrency,
  /** Deprecated name of WALLET_DEBIT_CONCURRENCY, read when that one is not set. */
  WALLET_DEBIT_TRANSACTIONS: debitConcurrency,
  /** A debit transaction beyond the first starts once the oldest waiting debit waited this long (ms). */
  WALLET_DEBIT_OVERLAP_MS: env.int(5, 0),
};

/** WALLET_DEBIT_CONCURRENCY, else the deprecated WALLET_DEBIT_TRANSACTIONS, else 2. */
export function debitConcurrencyOf(config: { WALLET_DEBIT_CONCURRENCY?: number; WALLET_DEBIT_TRANSACTIONS?: number }): number {
  return config.WALLET_DEBIT_CONCURRENCY ?? config.WALLET_DEBIT_TRANSACTIONS ?? 2;
}

/** Settings read from the environment by the embedded default (no customer URL: it is known in-process). */
export const walletSettingsEnv = z.object(walletEnv).omit({ CUSTOMER_SERVICE_URL: true, ENTITLEMENTS_SERVICE_URL: true, INGESTION_SERVICE_URL: true });

export interface WalletSettings {
  /** WALLET_EXPIRY_INTERVAL_MS (0: no expiry job). */
  expiryIntervalMs: number;
  /** WALLET_DEBIT_CONCURRENCY, else the deprecated WALLET_DEBIT_TRANSACTIONS, else 2. */
  debitConcurrency: number;
  /** WALLET_DEBIT_OVERLAP_MS. */
  debitOverlapMs: number;
}

/** The one mapping of the wallet's variables to its settings, for its own process and the embedded default. */
export function walletSettings(config: z.output<typeof walletSettingsEnv>): WalletSettings {
  return { expiryIntervalMs: config.WALLET_EXPIRY_INTERVAL_MS, debitConcurrency: debitConcurrencyOf(config), debitOverlapMs: config.WALLET_DEBIT_OVERLAP_MS };
}

export function walletSettingsFrom(source: NodeJS.ProcessEnv): WalletSettings {
  return walletSettings(loadConfig(walletSettingsEnv, source));
}
