import type { Readable, Writable } from 'node:stream';
import { once } from 'node:events';
import { TASK_ENTITY_PERMISSIONS, TASK_EXPORT_ENTITIES, taskCreatePermission } from '@billstream/contracts';
import type { TaskFileType } from '@billstream/contracts';
import { assertContextPermits, contextPermits, type RequestContext } from '@billstream/http';
import type { Db } from '@billstream/db';
import { NotFoundError, PayloadTooLargeError, ValidationError } from '@billstream/errors';
import { newId } from '@billstream/ids';
import type { NewExport, NewImport, TaskListQuery } from './domain';
import type { TaskRow, TaskStore } from './store';

/** Upload pieces stored as one row each (a bounded amount of the file in memory at a time). */
export const INPUT_CHUNK_BYTES = 4 * 1024 * 1024;

/**
 * Task steps on the embedded database, whose one session a statement holds until it ends:
 * writing a 4 MiB piece takes PGlite 0.5-1.5 s, a batch of 2,000 events 0.2-0.4 s, and every
 * other request waits meanwhile. These keep each step near 50 ms (ADR 0036).
 */
export const EMBEDDED_TASK_SIZES = { inputPieceBytes: 256 * 1024, batchRows: 250 };

const CONTENT_TYPES: Record<TaskFileType, string> = { CSV: 'text/csv; charset=utf-8', JSONL: 'application/x-ndjson' };

export interface TaskServiceDeps {
  db: Db;
  store: TaskStore;
  clock: () => Date;
  /** Tells this process's runner that work is waiting. */
  created: () => void;
  maxImportBytes: number;
  /** Bytes of the upload stored per row of `task_chunks`. */
  inputPieceBytes?: number;
}

export class TaskService {
  constructor(private readonly deps: TaskServiceDeps) {}

  /**
   * Needs the entity's read permission (ADR 0058): an export hands out its records. The task
   * keeps its filters as its view shows them (its row is its wire shape).
   */
  async createExport(scope: RequestContext, actor: string, asked: NewExport): Promise<TaskRow> {
    assertContextPermits(scope, taskCreatePermission('EXPORT', asked.entityType));
    const f = asked.filters ?? {};
    const row = await this.deps.store.insert(this.deps.db, {
      id: newId('task'),
      tenant_id: scope.tenantId,
      environment_id: scope.environmentId,
      task_type: 'EXPORT',
      entity_type: asked.entityType,
      file_type: asked.fileType,
      filters: {
        ...(f.startTime !== undefined ? { start_time: f.startTime } : {}),
        ...(f.endTime !== undefined ? { end_time: f.endTime } : {}),
        ...(f.externalCustomerId !== undefined ? { external_customer_id: f.externalCustomerId } : {}),
        ...(f.currency !== undefined ? { currency: f.currency } : {}),
      },
      created_by: actor,
      now: this.deps.clock(),
    });
    this.deps.created();
    return row;
  }

  /**
   * Stores the request body as the task's file, piece by piece (each piece its own short
   * statement: no transaction stays open while a client uploads, which on the embedded
   * default's single PGlite connection would stop every other service). The task is invisible
   * (UPLOADING) until the whole file is stored; a body over the limit (413) or a broken upload
   * deletes it with its pieces, leaving nothing. Needs the entity's write permission (ADR 0058),
   * checked before a byte is stored.
   */
  async createImport(
    scope: RequestContext,
    actor: string,
    asked: NewImport,
    body: Readable,
    declaredLength: number | undefined,
  ): Promise<TaskRow> {
    const limit = this.deps.maxImportBytes;
    try {
      assertContextPermits(scope, taskCreatePermission('IMPORT', asked.entityType));
    } catch (err) {
      body.resume();
      throw err;
    }
    if (declaredLength !== undefined && declaredLength > limit) {
      body.resume();
      throw tooLarge(limit);
    }
    const id = newId('task');
    await this.deps.store.insert(this.deps.db, {
      id,
      tenant_id: scope.tenantId,
      environment_id: scope.environmentId,
      task_type: 'IMPORT',
      entity_type: asked.entityType,
      file_type: asked.fileType,
      filters: {},
      created_by: actor,
      now: this.deps.clock(),
      uploading: true,
    });
    let row: TaskRow;
    try {
      let seq = 0;
      let size = 0;
      let pending: Buffer[] = [];
      let pendingBytes = 0;
      const flush = async () => {
        if (pendingBytes === 0) return;
        await this.deps.store.addChunk(this.deps.db, id, 'input', seq, Buffer.concat(pending, pendingBytes));
        seq += 1;
        pending = [];
        pendingBytes = 0;
      };
      for await (const piece of body) {
        const buf = Buffer.isBuffer(piece) ? piece : Buffer.from(piece as string);
        size += buf.length;
        if (size > limit) {
          body.resume();
          throw tooLarge(limit);
        }
        pending.push(buf);
        pendingBytes += buf.length;
        if (pendingBytes >= (this.deps.inputPieceBytes ?? INPUT_CHUNK_BYTES)) await flush();
      }
      await flush();
      row = await this.deps.store.uploaded(this.deps.db, id, seq, size, this.deps.clock());
    } catch (err) {
      await this.deps.store.dropUploads(this.deps.db, { id });
      throw err;
    }
    this.deps.created();
    return row;
  }

  get(scope: RequestContext, id: string): Promise<TaskRow> {
    return this.readable(scope, id);
  }

  private async row(scope: RequestContext, id: string): Promise<TaskRow> {
    const row = await this.deps.store.get(this.deps.db, scope, id);
    if (!row) throw new NotFoundError(`Task ${id} not found`, { field: 'id', id });
    return row;
  }

  /** The task, when the key may read its entity (403 naming the permission otherwise, ADR 0058). */
  private async readable(scope: RequestContext, id: string): Promise<TaskRow> {
    const row = await this.row(scope, id);
    assertContextPermits(scope, TASK_ENTITY_PERMISSIONS[row.entity_type].read);
    return row;
  }

  /**
   * The tasks of the entities the key may read (ADR 0058); an `entity_type` filter of an
   * entity it may not read is 403 naming the permission.
   */
  async list(scope: RequestContext, q: TaskListQuery): Promise<{ items: TaskRow[]; total: number }> {
    if (q.entityType) assertContextPermits(scope, TASK_ENTITY_PERMISSIONS[q.entityType].read);
    const entityTypes = TASK_EXPORT_ENTITIES.filter((e) => contextPermits(scope, TASK_ENTITY_PERMISSIONS[e].read));
    if (entityTypes.length === 0) return { items: [], total: 0 };
    return this.deps.store.list(this.deps.db, scope, q, entityTypes.length === TASK_EXPORT_ENTITIES.length ? undefined : entityTypes);
  }

  /** Needs what creating the task did (ADR 0058). */
  async cancel(scope: RequestContext, id: string): Promise<TaskRow> {
    const task = await this.row(scope, id);
    assertContextPermits(scope, TASK_ENTITY_PERMISSIONS[task.entity_type].read);
    assertContextPermits(scope, taskCreatePermission(task.task_type, task.entity_type));
    const cancelled = await this.deps.store.cancel(this.deps.db, scope, id, this.deps.clock());
    if (cancelled) {
      if (cancelled.task_type === 'IMPORT') await this.deps.store.dropInput(this.deps.db, id);
      return cancelled;
    }
    const row = await this.row(scope, id);
    throw new ValidationError(`Task ${id} is ${row.task_status}: only a PENDING or PROCESSING task can be cancelled`, {
      field: 'task_status',
      task_status: row.task_status,
    });
  }

  /** Checks that the export can be downloaded; answers its headers and a writer of its bytes. */
  async download(scope: RequestContext, id: string): Promise<{ headers: Record<string, string>; write: (out: Writable) => Promise<void> }> {
    const row = await this.readable(scope, id);
    if (row.task_type !== 'EXPORT') throw new ValidationError(`Task ${id} is an import: only an export has a file to download`, { field: 'id' });
    if (row.task_status !== 'COMPLETED') {
      throw new ValidationError(`Task ${id} is ${row.task_status}: its file can be downloaded once it is COMPLETED`, {
        field: 'task_status',
        task_status: row.task_status,
      });
    }
    const ext = row.file_type === 'CSV' ? 'csv' : 'jsonl';
    return {
      headers: {
        'content-type': CONTENT_TYPES[row.file_type],
        'content-length': String(row.file_size_bytes),
        'content-disposition': `attachment; filename="${row.id}.${ext}"`,
      },
      write: async (out) => {
        for (let seq = 0; seq < row.chunks; seq += 1) {
          const data = await this.deps.store.chunk(this.deps.db, row.id, 'output', seq);
          if (!data) throw new Error(`task ${row.id} lost output chunk ${seq}`);
          if (out.destroyed) return;
          if (!out.write(data)) await Promise.race([once(out, 'drain'), once(out, 'close')]);
        }
        out.end();
      },
    };
  }
}

function tooLarge(limit: number): PayloadTooLargeError {
  return new PayloadTooLargeError(`The file is larger than ${limit} bytes (100 MiB)`, { limit_bytes: limit });
}
