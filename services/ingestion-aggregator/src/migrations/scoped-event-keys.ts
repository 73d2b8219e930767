import type { Migration } from '@billstream/db';
import { eventScopeSql } from '../events/event-key';
import { EVENT_KEY_PARTITIONS } from './events';

/**
 * ADR 0053: the dedup record of an event becomes `(scope, event_id)`, the scope 8 bytes hashed
 * from tenant and environment (`eventScopeSql`), instead of the tenant and environment texts and
 * the event's timestamp, which nothing read: a smaller row and index, one `bigint` comparison
 * instead of two texts per index step, and the event id's own order kept. The keys stored so far
 * are rewritten into the new table (sorted, with the index built after them), so an event stored
 * before is still a duplicate after. `events.stored_at`, never read, is dropped too.
 */
export const scopedEventKeysMigration: Migration = {
  name: '009_scoped_event_keys',
  async up(db) {
    // Writers of the old format (a previous version's aggregator during a rolling update) wait
    // here and commit first, so no key of theirs is missed by the copy below; after the commit
    // their statements fail (not a record error: retried whole, never dead-lettered).
    await db.raw('LOCK TABLE event_keys IN SHARE ROW EXCLUSIVE MODE');
    await db.raw('CREATE TABLE event_keys_scoped (scope bigint NOT NULL, event_id text NOT NULL) PARTITION BY HASH (scope, event_id)');
    for (let i = 0; i < EVENT_KEY_PARTITIONS; i += 1) {
      await db.raw(
        `CREATE TABLE event_keys_scoped_h${i} PARTITION OF event_keys_scoped FOR VALUES WITH (MODULUS ${EVENT_KEY_PARTITIONS}, REMAINDER ${i})`,
      );
    }
    await db.raw(
      `INSERT INTO event_keys_scoped (scope, event_id)
       SELECT ${eventScopeSql('tenant_id', 'environment_id')}, event_id FROM event_keys ORDER BY 1, 2`,
    );
    await db.raw('DROP TABLE event_keys');
    await db.raw('ALTER TABLE event_keys_scoped RENAME TO event_keys');
    await db.raw('ALTER TABLE event_keys ADD CONSTRAINT event_keys_pkey PRIMARY KEY (scope, event_id)');
    for (let i = 0; i < EVENT_KEY_PARTITIONS; i += 1) {
      await db.raw(`ALTER TABLE event_keys_scoped_h${i} RENAME TO event_keys_h${i}`);
      await db.raw(`ALTER INDEX event_keys_scoped_h${i}_pkey RENAME TO event_keys_h${i}_pkey`);
    }
    await db.raw('ALTER TABLE events DROP COLUMN stored_at');
  },
  // No down: the texts of a hashed scope cannot be recovered; going back needs a restore.
};
