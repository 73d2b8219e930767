import type { Migration } from '@billstream/db';
import { outboxMigration } from '@billstream/outbox';
import { billingMigration } from './001-billing';
import { invoicesMigration } from './002-invoices';
import { topupSettlementMigration } from './003-topup-settlement';
import { invoiceCountsMigration } from './004-invoice-counts';
import { tasksMigration } from './005-tasks';

export const SCHEMA = 'billing';

export const migrations: Migration[] = [
  outboxMigration(SCHEMA),
  billingMigration(SCHEMA),
  invoicesMigration(SCHEMA),
  topupSettlementMigration(SCHEMA),
  invoiceCountsMigration(SCHEMA),
  tasksMigration(SCHEMA),
];
