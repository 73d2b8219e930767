import type { Migration } from '@billstream/db';
import { outboxMigration } from '@billstream/outbox';
import { billingMigration } from './001-billing';
import { invoicesMigration } from './002-invoices';
import { invoiceCountsMigration } from './003-invoice-counts';

export const SCHEMA = 'billing';

export const migrations: Migration[] = [outboxMigration(SCHEMA), billingMigration(SCHEMA), invoicesMigration(SCHEMA), invoiceCountsMigration(SCHEMA)];
