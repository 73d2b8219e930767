import type { Migration } from '@billstream/db';
import { consumerDeadLettersMigration, outboxMigration } from '@billstream/outbox';
import { deadLettersMigration } from './dead-letters';
import { eventHoursMigration } from './event-hours';
import { eventsMigration } from './events';
import { scopedEventKeysMigration } from './scoped-event-keys';
import { metersMigration } from './meters';
import { minuteRollupsMigration } from './minute-rollups';
import { uniqueCountMonthsMigration } from './unique-count-months';
import { usageRollupsMigration } from './usage-rollups';

export const SCHEMA = 'ingestion';

export const migrations: Migration[] = [outboxMigration(SCHEMA), eventsMigration, metersMigration, deadLettersMigration, usageRollupsMigration, uniqueCountMonthsMigration, minuteRollupsMigration, eventHoursMigration, scopedEventKeysMigration, consumerDeadLettersMigration(SCHEMA)];
