import { env, loadConfig } from '@billstream/config';
import { z } from 'zod';

/** Variables of the wallet service beyond the common ones. */
export const walletEnv = {
  CUSTOMER_SERVICE_URL: z.string().url('must be the base URL of the customer service'),
  WALLET_EXPIRY_INTERVAL_MS: env.int(60_000, 0),
  /** Database transactions of debits (group commits) that run at once in one instance. */
  WALLET_DEBIT_TRANSACTIONS: env.int(1, 1),
};

/** Settings read from the environment by the embedded default (no customer URL: it is known in-process). */
export const walletSettingsEnv = z.object({
  WALLET_EXPIRY_INTERVAL_MS: walletEnv.WALLET_EXPIRY_INTERVAL_MS,
  WALLET_DEBIT_TRANSACTIONS: walletEnv.WALLET_DEBIT_TRANSACTIONS,
});

export function walletSettingsFrom(source: NodeJS.ProcessEnv): { expiryIntervalMs: number; debitTransactions: number } {
  const config = loadConfig(walletSettingsEnv, source);
  return { expiryIntervalMs: config.WALLET_EXPIRY_INTERVAL_MS, debitTransactions: config.WALLET_DEBIT_TRANSACTIONS };
}
