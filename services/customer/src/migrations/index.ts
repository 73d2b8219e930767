import type { Migration } from '@billstream/db';
import { outboxMigration } from '@billstream/outbox';

export const SCHEMA = 'customer';

export const migrations: Migration[] = [outboxMigration(SCHEMA)];
