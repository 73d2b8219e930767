import type { Migration } from '@billstream/db';
import { outboxMigration } from '@billstream/outbox';
import { customersMigration } from './001-customers';
import { taxIdentityMigration } from './002-tax-identity';
import { customerTaxRatesMigration } from './003-customer-tax-rates';

export const SCHEMA = 'customer';

export const migrations: Migration[] = [outboxMigration(SCHEMA), customersMigration(SCHEMA), taxIdentityMigration(SCHEMA), customerTaxRatesMigration(SCHEMA)];
