export { createWalletService, type WalletServiceConfig } from './service';
export { migrations, SCHEMA } from './migrations';
