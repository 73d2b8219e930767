import type { Migration } from '@billstream/db';
import { outboxMigration } from '@billstream/outbox';
import { walletsMigration } from './001-wallets';

export const SCHEMA = 'wallet';

export const migrations: Migration[] = [outboxMigration(SCHEMA), walletsMigration(SCHEMA)];
