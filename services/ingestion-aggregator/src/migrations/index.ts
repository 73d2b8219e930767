import type { Migration } from '@billstream/db';
import { outboxMigration } from '@billstream/outbox';

export const SCHEMA = 'ingestion';

export const migrations: Migration[] = [outboxMigration(SCHEMA)];
