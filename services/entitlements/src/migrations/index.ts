import type { Migration } from '@billstream/db';
import { consumerDeadLettersMigration, outboxMigration } from '@billstream/outbox';
import { projectionMigration } from './001-projection';

export const SCHEMA = 'entitlements';

/** `outboxMigration` for its `processed_messages` (the consumers apply each message once); the service publishes nothing. */
export const migrations: Migration[] = [outboxMigration(SCHEMA), consumerDeadLettersMigration(SCHEMA), projectionMigration(SCHEMA)];
