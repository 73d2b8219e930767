import type { Migration } from '@billstream/db';
import { consumerDeadLettersMigration, outboxMigration } from '@billstream/outbox';
import { walletsMigration } from './001-wallets';
import { pendingDebitsMigration } from './002-pending-debits';
import { invoiceCreditsMigration } from './003-invoice-credits';
import { unbilledUsageMigration } from './004-unbilled-usage';
import { customerCreditsMigration } from './005-customer-credits';
import { reservationsMigration } from './006-reservations';
import { quantityReservationsMigration } from './007-quantity-reservations';

export const SCHEMA = 'wallet';

export const migrations: Migration[] = [outboxMigration(SCHEMA), walletsMigration(SCHEMA), pendingDebitsMigration(SCHEMA), invoiceCreditsMigration(SCHEMA), unbilledUsageMigration(SCHEMA), customerCreditsMigration(SCHEMA), consumerDeadLettersMigration(SCHEMA), reservationsMigration(SCHEMA), quantityReservationsMigration(SCHEMA)];
