export { createWalletService, type WalletServiceConfig, type WalletServiceHandle } from './service';
export { migrations, SCHEMA } from './migrations';
