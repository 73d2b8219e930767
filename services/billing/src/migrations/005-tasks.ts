import type { Migration } from '@billstream/db';

/**
 * Bulk tasks (issue #15, ADR 0019):
 * - `tasks`: one row per task with its progress; `claimed_by` and `lease_until` say which
 *   process runs it and until when (a PROCESSING task whose lease ran out belongs to nobody
 *   and is claimed again, `attempts` counting the runs); `checkpoint` is where the last
 *   committed batch ended, so a new run resumes there.
 * - `task_chunks`: the files, in Postgres where every replica reads them: an import's upload
 *   (`kind` 'input') and an export's output ('output'), in pieces of at most a few MiB written
 *   in order (`seq`); an export's pieces are written in the transaction that advances its
 *   checkpoint, so a resumed export neither repeats nor loses a row.
 */
export function tasksMigration(schema: string): Migration {
  return {
    name: '005_tasks',
    async up(db) {
      await db.raw(
        `CREATE TABLE ??.tasks (
          id text PRIMARY KEY,
          tenant_id text NOT NULL,
          environment_id text NOT NULL,
          task_type text NOT NULL,
          entity_type text NOT NULL,
          file_type text NOT NULL,
          task_status text NOT NULL,
          filters jsonb NOT NULL DEFAULT '{}',
          total_records bigint,
          processed_records bigint NOT NULL DEFAULT 0,
          successful_records bigint NOT NULL DEFAULT 0,
          failed_records bigint NOT NULL DEFAULT 0,
          error_summary text,
          errors jsonb NOT NULL DEFAULT '[]',
          file_size_bytes bigint NOT NULL DEFAULT 0,
          chunks integer NOT NULL DEFAULT 0,
          checkpoint jsonb,
          attempts integer NOT NULL DEFAULT 0,
          claimed_by text,
          lease_until timestamptz,
          created_by text,
          created_at timestamptz NOT NULL,
          started_at timestamptz,
          completed_at timestamptz,
          updated_at timestamptz NOT NULL
        )`,
        [schema],
      );
      await db.raw('CREATE INDEX tasks_scope_created ON ??.tasks (tenant_id, environment_id, created_at DESC, id DESC)', [schema]);
      await db.raw(
        `CREATE INDEX tasks_runnable ON ??.tasks (created_at) WHERE task_status IN ('PENDING', 'PROCESSING')`,
        [schema],
      );
      await db.raw(
        `CREATE TABLE ??.task_chunks (
          task_id text NOT NULL REFERENCES ??.tasks (id) ON DELETE CASCADE,
          kind text NOT NULL,
          seq integer NOT NULL,
          data bytea NOT NULL,
          PRIMARY KEY (task_id, kind, seq)
        )`,
        [schema, schema],
      );
    },
    async down(db) {
      await db.raw('DROP TABLE ??.task_chunks, ??.tasks', [schema, schema]);
    },
  };
}
