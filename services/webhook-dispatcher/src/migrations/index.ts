import type { Migration } from '@billstream/db';
import { consumerDeadLettersMigration, outboxMigration } from '@billstream/outbox';
import { webhooksMigration } from './001-webhooks';
import { traceContextMigration } from './002-trace-context';

export const SCHEMA = 'webhook';

export const migrations: Migration[] = [outboxMigration(SCHEMA), webhooksMigration(SCHEMA), traceContextMigration(SCHEMA), consumerDeadLettersMigration(SCHEMA)];
