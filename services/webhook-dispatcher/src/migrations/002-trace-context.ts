import type { Migration } from '@billstream/db';

/**
 * messages.trace_parent: the W3C `traceparent` the event arrived with (ADR 0020), so that the
 * delivery attempts, made later by the worker, continue the trace of the change that caused
 * them. Null when the event came without one (tracing off upstream).
 */
export function traceContextMigration(schema: string): Migration {
  return {
    name: '002_trace_context',
    async up(db) {
      await db.schema.withSchema(schema).alterTable('messages', (t) => {
        t.text('trace_parent');
      });
    },
    async down(db) {
      await db.schema.withSchema(schema).alterTable('messages', (t) => {
        t.dropColumn('trace_parent');
      });
    },
  };
}
