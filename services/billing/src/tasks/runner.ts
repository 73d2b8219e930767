import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { MAX_TASK_ERRORS, type Scope, type TaskEntity } from '@billstream/contracts';
import type { Db } from '@billstream/db';
import { newUlid } from '@billstream/ids';
import type { Logger } from '@billstream/logger';
import { Repeating } from '@billstream/runtime';
import { encodeRows, readRows, UnreadableFileError } from './files';
import { CSV_FIELDS, EXPORT_COLUMNS, type ExportSource } from './exports';
import type { ImportRow, ImportSink } from './imports';
import type { TaskProgress, TaskRow, TaskRowError, TaskStore } from './store';

export interface TaskRunnerSettings {
  /** How often an idle runner looks for work; 0: this process runs no tasks. */
  pollMs: number;
  /** How long a claim keeps other replicas off a task; renewed while it runs. */
  leaseMs: number;
  /** Runs of one task (a run ends when its process dies) before it FAILS. */
  maxAttempts: number;
}

export interface TaskRunnerDeps {
  db: Db;
  store: TaskStore;
  exports: Record<TaskEntity, ExportSource>;
  imports: Partial<Record<TaskEntity, ImportSink>>;
  logger: Logger;
  clock: () => Date;
  settings: TaskRunnerSettings;
}

/** An upload unfinished after this long was abandoned (the gateway gives an upload 5 minutes). */
const ABANDONED_UPLOAD_MS = 3_600_000;

/** The task is no longer this runner's (cancelled, or taken by another after its lease ran out). */
class LostTask extends Error {}

/**
 * Runs tasks in the background of every billing process (ADR 0019). A runner claims one task at
 * a time with `FOR UPDATE SKIP LOCKED` (two replicas never take the same one) and a lease it
 * renews while it works; each batch of rows commits the task's progress, checkpoint and (for
 * exports) the batch's bytes in one transaction, so a run that dies (SIGKILL, a crash) leaves
 * the task at its last checkpoint: once the lease ran out, the next claim resumes it there. A
 * task whose runs died `maxAttempts` times FAILS with that reason rather than loop forever.
 */
export class TaskRunner {
  readonly worker = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private readonly schedule: Repeating<void>;
  private stopping = false;
  private current?: string;
  private sweptAt = 0;

  constructor(private readonly deps: TaskRunnerDeps) {
    // Rounds of `loop` (every task claimable now), the next pollMs after the last ended; a poke looks at once.
    this.schedule = new Repeating({
      run: () => this.loop(),
      intervalMs: deps.settings.pollMs,
      immediate: true,
      unref: true,
      logger: deps.logger,
      failure: 'task runner round failed; will retry',
    });
  }

  start(): void {
    if (this.deps.settings.pollMs <= 0) return;
    this.stopping = false;
    this.schedule.start();
  }

  /** Looks for work now (a task was just created). */
  poke(): void {
    this.schedule.poke();
  }

  /** Stops after the current batch; the task it ran is released for another runner at once. */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.schedule.stop();
  }

  /** Claims and runs tasks until none is left. */
  private async loop(): Promise<void> {
    const now = this.deps.clock().getTime();
    if (now - this.sweptAt > 60_000) {
      this.sweptAt = now;
      try {
        // Uploads of a process that died mid-request (never finished, never visible).
        await this.deps.store.dropUploads(this.deps.db, { before: new Date(now - ABANDONED_UPLOAD_MS) });
      } catch (err) {
        this.deps.logger.warn('abandoned uploads not dropped', { err });
      }
    }
    while (!this.stopping) {
      let task: TaskRow | undefined;
      try {
        task = await this.deps.store.claim(this.deps.db, this.worker, this.deps.clock(), this.deps.settings.leaseMs);
      } catch (err) {
        this.deps.logger.warn('task claim failed', { err });
        return;
      }
      if (!task) return;
      await this.runOne(task);
    }
  }

  /** Runs one claimed task to its end (or until it is lost or this runner stops). Public for tests. */
  async runOne(task: TaskRow): Promise<void> {
    const { store, db, clock, logger, settings } = this.deps;
    const log = logger.child({ task_id: task.id });
    this.current = task.id;
    if (task.attempts > settings.maxAttempts) {
      await store.finish(db, task.id, this.worker, 'FAILED', `the task was interrupted ${settings.maxAttempts} times (its process stopped, or a service it needs was unavailable); it was not finished`, clock());
      log.warn('task failed: too many interrupted runs', { attempts: task.attempts });
      return;
    }
    if (task.attempts > 1) log.info('task resumed', { attempts: task.attempts, checkpoint: task.checkpoint });
    let lost = false;
    const heartbeat = setInterval(() => {
      store.renew(db, task.id, this.worker, clock(), settings.leaseMs).then(
        (ok) => (lost ||= !ok),
        (err: unknown) => log.warn('task lease renewal failed', { err }),
      );
    }, Math.max(200, Math.floor(settings.leaseMs / 3)));
    heartbeat.unref?.();
    const advance = async (progress: TaskProgress) => {
      if (lost) throw new LostTask();
      const ok = await db.transaction((trx) => store.advance(trx, task, this.worker, progress, clock(), settings.leaseMs, MAX_TASK_ERRORS));
      if (!ok) throw new LostTask();
      if (this.stopping) throw new LostTask();
    };
    try {
      if (task.task_type === 'EXPORT') await this.runExport(task, advance);
      else await this.runImport(task, advance);
      const row = await store.getById(db, task.id);
      const failed = Number(row?.failed_records ?? 0);
      const summary = failed > 0 ? `${failed} row(s) could not be imported; see errors (the first ${MAX_TASK_ERRORS} by line)` : null;
      if (await store.finish(db, task.id, this.worker, 'COMPLETED', summary, clock())) {
        if (task.task_type === 'IMPORT') await store.dropInput(db, task.id);
        log.info('task completed', { processed: row?.processed_records });
      }
    } catch (err) {
      if (err instanceof LostTask) {
        if (this.stopping) {
          // A clean stop: hand the task over at once instead of after its lease.
          await db('tasks').where({ id: task.id, claimed_by: this.worker, task_status: 'PROCESSING' }).update({ lease_until: clock() });
          log.info('task released at stop');
        } else log.info('task no longer ours (cancelled or taken over); stopped');
      } else if (err instanceof UnreadableFileError) {
        await store.finish(db, task.id, this.worker, 'FAILED', err.message, clock());
        if (task.task_type === 'IMPORT') await store.dropInput(db, task.id);
        log.info('task failed: unreadable file', { reason: err.message });
      } else {
        // Transient (a service or the broker unavailable): the lease runs out and a run takes it again.
        log.warn('task run interrupted; it resumes from its checkpoint after its lease', { err });
      }
    } finally {
      clearInterval(heartbeat);
      this.current = undefined;
    }
  }

  private scope(task: TaskRow): Scope {
    return { tenantId: task.tenant_id, environmentId: task.environment_id };
  }

  private async runExport(task: TaskRow, advance: (p: TaskProgress) => Promise<void>): Promise<void> {
    const source = this.deps.exports[task.entity_type];
    const columns = EXPORT_COLUMNS[task.entity_type];
    let checkpoint = (task.checkpoint as { cursor: unknown; started: boolean; done: boolean } | null) ?? { cursor: null, started: false, done: false };
    while (!checkpoint.done) {
      const page = await source(this.scope(task), task.filters ?? {}, checkpoint.cursor, `task-${task.id}-${newUlid()}`);
      const output = encodeRows(task.file_type, columns, page.rows, !checkpoint.started, CSV_FIELDS[task.entity_type]);
      checkpoint = { cursor: page.next, started: true, done: page.next === null };
      await advance({ processed: page.rows.length, successful: page.rows.length, failed: 0, errors: [], checkpoint, output });
    }
  }

  private async runImport(task: TaskRow, advance: (p: TaskProgress) => Promise<void>): Promise<void> {
    const sink = this.deps.imports[task.entity_type];
    if (!sink) throw new UnreadableFileError(`${task.entity_type} cannot be imported`);
    const { db, store } = this.deps;
    const resumeAfter = (task.checkpoint as { line?: number } | null)?.line ?? 0;
    async function* chunks(): AsyncGenerator<Buffer> {
      for (let seq = 0; seq < task.chunks; seq += 1) {
        const data = await store.chunk(db, task.id, 'input', seq);
        if (!data) throw new UnreadableFileError('the uploaded file is incomplete');
        yield data;
      }
    }
    let rows: ImportRow[] = [];
    let bad: TaskRowError[] = [];
    let lastLine = resumeAfter;
    const flush = async () => {
      const result = rows.length > 0 ? await sink.handle(this.scope(task), task.file_type, rows, `task-${task.id}-${newUlid()}`) : { successful: 0, errors: [] };
      const errors = [...bad, ...result.errors].sort((a, b) => a.line - b.line);
      await advance({
        processed: rows.length + bad.length,
        successful: result.successful,
        failed: errors.length,
        errors,
        checkpoint: { line: lastLine },
      });
      rows = [];
      bad = [];
    };
    for await (const row of readRows(task.file_type, chunks(), sink.columns)) {
      if (row.line <= resumeAfter) continue;
      lastLine = row.line;
      if ('error' in row) bad.push({ line: row.line, message: row.error });
      else rows.push(row);
      if (rows.length + bad.length >= sink.batchSize) await flush();
    }
    if (rows.length + bad.length > 0) await flush();
  }

  /** The task this runner works on now, if any (tests). */
  get busyWith(): string | undefined {
    return this.current;
  }
}
