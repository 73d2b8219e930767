import type { Migration } from '@billstream/db';
import { outboxMigration } from '@billstream/outbox';
import { billingMigration } from './001-billing';

export const SCHEMA = 'billing';

export const migrations: Migration[] = [outboxMigration(SCHEMA), billingMigration(SCHEMA)];
