import type { Db } from '@billstream/db';
import type { Logger } from '@billstream/logger';
import type { TaskStore } from './task-store';

const DAY_MS = 86_400_000;
const EVERY_MS = 3_600_000;

/**
 * Deletes delivery records, finished tasks and unneeded envelopes older than the retention,
 * once at start and then every hour. Replicas may all run it: the deletes are idempotent.
 */
export class RetentionJob {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;

  constructor(
    private readonly db: Db,
    private readonly tasks: TaskStore,
    private readonly retentionDays: number,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.running = this.runOnce();
    this.timer = setInterval(() => {
      this.running = this.runOnce();
    }, EVERY_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }

  private async runOnce(): Promise<void> {
    try {
      const deleted = await this.tasks.prune(this.db, new Date(Date.now() - this.retentionDays * DAY_MS));
      if (deleted.deliveries + deleted.tasks + deleted.messages > 0) this.logger.info('webhook retention', deleted);
    } catch (err) {
      this.logger.warn('webhook retention failed; will run again in an hour', { err });
    }
  }
}
