import type { Logger } from '@billstream/logger';

export interface RepeatingOptions<T> {
  /** One round of the job. */
  run: () => Promise<T>;
  /** Milliseconds between the end of one round and the start of the next (0 or less: never started). */
  intervalMs: number;
  logger: Logger;
  /** Said at warn when a round fails (the next round retries). */
  failure: string;
  /** Called with a round's result (to log what it did). */
  done?: (result: T) => void;
}

/**
 * A job's schedule: one round at a time, the next `intervalMs` after the last ended (never
 * overlapping, so a slow round delays the next rather than racing it); a failed round is logged
 * and the next one retries. `stop()` waits for a round in flight.
 */
export class Repeating<T> {
  private timer?: NodeJS.Timeout;
  private running?: Promise<unknown>;
  private stopped = true;

  constructor(private readonly options: RepeatingOptions<T>) {}

  start(): void {
    if (this.options.intervalMs <= 0 || !this.stopped) return;
    this.stopped = false;
    this.schedule();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  private schedule(): void {
    this.timer = setTimeout(() => {
      this.running = this.options
        .run()
        .then((result) => this.options.done?.(result))
        .catch((err) => this.options.logger.warn(this.options.failure, { err }))
        .finally(() => {
          if (!this.stopped) this.schedule();
        });
    }, this.options.intervalMs);
  }
}
