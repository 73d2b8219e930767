import type { Scope, TaskEntity, TaskFileType, TaskFilters, TaskResponse, TaskStatus, TaskType } from '@billstream/contracts';
import type { Conn, Db, Trx } from '@billstream/db';
import type { TaskListQuery } from './domain';

export interface TaskRowError {
  line: number;
  message: string;
}

export interface TaskRow {
  id: string;
  tenant_id: string;
  environment_id: string;
  task_type: TaskType;
  entity_type: TaskEntity;
  file_type: TaskFileType;
  task_status: TaskStatus;
  filters: TaskFilters;
  total_records: string | number | null;
  processed_records: string | number;
  successful_records: string | number;
  failed_records: string | number;
  error_summary: string | null;
  errors: TaskRowError[];
  file_size_bytes: string | number;
  chunks: number;
  checkpoint: Record<string, unknown> | null;
  attempts: number;
  claimed_by: string | null;
  lease_until: Date | null;
  created_by: string | null;
  created_at: Date;
  started_at: Date | null;
  completed_at: Date | null;
  updated_at: Date;
}

/** What a committed batch of a running task adds. */
export interface TaskProgress {
  processed: number;
  successful: number;
  failed: number;
  /** New row errors (kept up to MAX_TASK_ERRORS in all). */
  errors: TaskRowError[];
  checkpoint: Record<string, unknown>;
  /** Output bytes of this batch (exports), written as chunk number `chunks`. */
  output?: Buffer;
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);
const n = (v: string | number | null) => (v === null ? null : Number(v));

export function toTaskView(r: TaskRow): TaskResponse {
  return {
    id: r.id,
    task_type: r.task_type,
    entity_type: r.entity_type,
    file_type: r.file_type,
    task_status: r.task_status,
    filters: r.filters ?? {},
    total_records: n(r.total_records),
    processed_records: Number(r.processed_records),
    successful_records: Number(r.successful_records),
    failed_records: Number(r.failed_records),
    error_summary: r.error_summary,
    errors: r.errors ?? [],
    file_size_bytes: Number(r.file_size_bytes),
    created_at: r.created_at.toISOString(),
    started_at: iso(r.started_at),
    completed_at: iso(r.completed_at),
    tenant_id: r.tenant_id,
    environment_id: r.environment_id,
  };
}

/**
 * An import whose file is still arriving: its row exists (its pieces reference it) but no
 * read, list or runner sees it; it becomes PENDING once the whole file is stored, or is deleted.
 */
export const UPLOADING = 'UPLOADING';

const scoped = (conn: Conn, scope: Scope) =>
  conn<TaskRow>('tasks').where({ tenant_id: scope.tenantId, environment_id: scope.environmentId }).whereNot('task_status', UPLOADING);

export const FINISHED: TaskStatus[] = ['COMPLETED', 'FAILED', 'CANCELLED'];

/** Stateless access to `tasks` and `task_chunks`; the connection comes first. */
export class TaskStore {
  async insert(
    conn: Conn,
    row: Pick<TaskRow, 'id' | 'tenant_id' | 'environment_id' | 'task_type' | 'entity_type' | 'file_type' | 'filters' | 'created_by'> & { now: Date; uploading?: boolean },
  ): Promise<TaskRow> {
    const { now, uploading, ...fields } = row;
    const [created] = await conn<TaskRow>('tasks')
      .insert({ ...fields, filters: JSON.stringify(fields.filters) as never, task_status: (uploading ? UPLOADING : 'PENDING') as never, created_at: now, updated_at: now })
      .returning('*');
    return created as TaskRow;
  }

  async addChunk(conn: Conn, taskId: string, kind: 'input' | 'output', seq: number, data: Buffer): Promise<void> {
    await conn('task_chunks').insert({ task_id: taskId, kind, seq, data });
  }

  /** Chunk `seq` of a task's file, or undefined past its end. */
  async chunk(conn: Conn, taskId: string, kind: 'input' | 'output', seq: number): Promise<Buffer | undefined> {
    const row = await conn('task_chunks').where({ task_id: taskId, kind, seq }).first('data');
    const data = row?.data as Uint8Array | undefined;
    // pg answers a bytea as a Buffer, PGlite as a plain Uint8Array: a Buffer (a view, no copy) either way.
    if (data === undefined || Buffer.isBuffer(data)) return data;
    return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  }

  async get(conn: Conn, scope: Scope, id: string): Promise<TaskRow | undefined> {
    return scoped(conn, scope).where({ id }).first();
  }

  /** The upload is whole: the task becomes PENDING with its file's size and pieces. */
  async uploaded(conn: Conn, id: string, chunks: number, bytes: number, now: Date): Promise<TaskRow> {
    const [row] = await conn<TaskRow>('tasks')
      .where({ id, task_status: UPLOADING as never })
      .update({ task_status: 'PENDING', chunks, file_size_bytes: bytes, updated_at: now })
      .returning('*');
    return row as TaskRow;
  }

  /** Deletes an upload that failed (its pieces go with it), or uploads abandoned before `before` (a process that died mid-upload). */
  async dropUploads(conn: Conn, where: { id: string } | { before: Date }): Promise<void> {
    const q = conn('tasks').where('task_status', UPLOADING);
    if ('id' in where) q.andWhere('id', where.id);
    else q.andWhere('created_at', '<', where.before);
    await q.delete();
  }

  async getById(conn: Conn, id: string): Promise<TaskRow | undefined> {
    return conn<TaskRow>('tasks').where({ id }).first();
  }

  /** `entityTypes`: only tasks of these entities (those the caller may read); undefined: all. */
  async list(conn: Conn, scope: Scope, q: TaskListQuery, entityTypes?: readonly TaskEntity[]): Promise<{ items: TaskRow[]; total: number }> {
    const filtered = () => {
      const b = scoped(conn, scope);
      if (entityTypes) b.whereIn('entity_type', [...entityTypes]);
      if (q.taskType) b.where({ task_type: q.taskType });
      if (q.entityType) b.where({ entity_type: q.entityType });
      if (q.taskStatus) b.where({ task_status: q.taskStatus });
      return b;
    };
    const [items, [{ total }]] = await Promise.all([
      filtered()
        .orderBy([
          { column: 'created_at', order: 'desc' },
          { column: 'id', order: 'desc' },
        ])
        .limit(q.limit)
        .offset(q.offset),
      filtered().count({ total: '*' }),
    ]);
    return { items, total: Number(total) };
  }

  /** PENDING or PROCESSING -> CANCELLED; undefined when the task had finished already. */
  async cancel(conn: Conn, scope: Scope, id: string, now: Date): Promise<TaskRow | undefined> {
    const [row] = await scoped(conn, scope)
      .where({ id })
      .whereIn('task_status', ['PENDING', 'PROCESSING'])
      .update({ task_status: 'CANCELLED', completed_at: now, updated_at: now, claimed_by: null, lease_until: null })
      .returning('*');
    return row;
  }

  /**
   * Takes the oldest task nobody runs: a PENDING one, or a PROCESSING one whose runner's lease
   * ran out (its process died). SKIP LOCKED: two replicas claiming at once take different tasks.
   */
  async claim(db: Db, worker: string, now: Date, leaseMs: number): Promise<TaskRow | undefined> {
    const result = await db.raw(
      `UPDATE tasks SET task_status = 'PROCESSING', claimed_by = ?, lease_until = ?::timestamptz + (? || ' milliseconds')::interval,
              attempts = attempts + 1, started_at = coalesce(started_at, ?), updated_at = ?
        WHERE id = (
          SELECT id FROM tasks
           WHERE task_status = 'PENDING' OR (task_status = 'PROCESSING' AND lease_until < ?)
           ORDER BY created_at, id
           LIMIT 1
           FOR UPDATE SKIP LOCKED)
          AND (task_status = 'PENDING' OR lease_until < ?)
        RETURNING *`,
      [worker, now, String(leaseMs), now, now, now, now],
    );
    return (result.rows as TaskRow[])[0];
  }

  /**
   * Commits one batch: the output chunk (exports), the counts, errors and checkpoint, and a
   * renewed lease; false (and nothing written, the caller rolls back) when the task is no
   * longer this worker's to run (cancelled, or claimed by another after a lost lease).
   */
  async advance(trx: Trx, task: TaskRow, worker: string, progress: TaskProgress, now: Date, leaseMs: number, maxErrors: number): Promise<boolean> {
    const row = await trx<TaskRow>('tasks').where({ id: task.id }).forUpdate().first();
    if (!row || row.task_status !== 'PROCESSING' || row.claimed_by !== worker) return false;
    let chunks = row.chunks;
    let bytes = Number(row.file_size_bytes);
    if (progress.output && progress.output.length > 0) {
      await this.addChunk(trx, task.id, 'output', chunks, progress.output);
      chunks += 1;
      bytes += progress.output.length;
    }
    const errors = [...(row.errors ?? []), ...progress.errors].slice(0, maxErrors);
    await trx('tasks')
      .where({ id: task.id })
      .update({
        processed_records: Number(row.processed_records) + progress.processed,
        successful_records: Number(row.successful_records) + progress.successful,
        failed_records: Number(row.failed_records) + progress.failed,
        errors: JSON.stringify(errors),
        checkpoint: JSON.stringify(progress.checkpoint),
        chunks,
        file_size_bytes: task.task_type === 'EXPORT' ? bytes : row.file_size_bytes,
        lease_until: new Date(now.getTime() + leaseMs),
        updated_at: now,
      });
    return true;
  }

  /** Renews the lease of a running task; false when it is no longer this worker's. */
  async renew(conn: Conn, id: string, worker: string, now: Date, leaseMs: number): Promise<boolean> {
    const n = await conn('tasks')
      .where({ id, claimed_by: worker, task_status: 'PROCESSING' })
      .update({ lease_until: new Date(now.getTime() + leaseMs), updated_at: now });
    return n > 0;
  }

  /** PROCESSING -> COMPLETED or FAILED by its runner; false when it is no longer this worker's. */
  async finish(conn: Conn, id: string, worker: string, status: 'COMPLETED' | 'FAILED', summary: string | null, now: Date): Promise<boolean> {
    const n = await conn('tasks')
      .where({ id, claimed_by: worker, task_status: 'PROCESSING' })
      .update({
        task_status: status,
        error_summary: summary,
        total_records: conn.raw('processed_records'),
        completed_at: now,
        updated_at: now,
        // claimed_by stays: the runner that finished it.
        lease_until: null,
      });
    return n > 0;
  }

  /** Drops an import's upload once the task finished (the file is not kept after its import). */
  async dropInput(conn: Conn, id: string): Promise<void> {
    await conn('task_chunks').where({ task_id: id, kind: 'input' }).delete();
  }
}
