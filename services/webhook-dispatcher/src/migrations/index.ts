import type { Migration } from '@billstream/db';
import { outboxMigration } from '@billstream/outbox';
import { webhooksMigration } from './001-webhooks';

export const SCHEMA = 'webhook';

export const migrations: Migration[] = [outboxMigration(SCHEMA), webhooksMigration(SCHEMA)];
