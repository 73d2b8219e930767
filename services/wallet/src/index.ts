export { createWalletService, type WalletServiceConfig, type WalletServiceHandle } from './service';
export { walletEnv, walletSettings, walletSettingsEnv, walletSettingsFrom, type WalletSettings } from './config';
export { migrations, SCHEMA } from './migrations';
