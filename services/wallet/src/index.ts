export { createWalletService, type WalletServiceConfig, type WalletServiceHandle } from './service';
export { walletEnv, walletSettings, walletSettingsEnv, walletSettingsFrom, type WalletSettings } from './config';
export { migrations, SCHEMA } from './migrations';
/** The ledger's invariants: a read-only check tests through the gateway run on the wallet's schema. */
export { assertLedgerAddsUp } from './ledger/invariants';
