import type { Migration } from '@billstream/db';
import { outboxMigration } from '@billstream/outbox';
import { billingMigration } from './001-billing';
import { invoicesMigration } from './002-invoices';
import { topupSettlementMigration } from './003-topup-settlement';

export const SCHEMA = 'billing';

export const migrations: Migration[] = [outboxMigration(SCHEMA), billingMigration(SCHEMA), invoicesMigration(SCHEMA), topupSettlementMigration(SCHEMA)];
