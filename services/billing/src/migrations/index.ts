import type { Migration } from '@billstream/db';
import { outboxMigration } from '@billstream/outbox';
import { billingMigration } from './001-billing';
import { invoicesMigration } from './002-invoices';

export const SCHEMA = 'billing';

export const migrations: Migration[] = [outboxMigration(SCHEMA), billingMigration(SCHEMA), invoicesMigration(SCHEMA)];
