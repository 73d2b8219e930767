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
  /** The first round at once rather than an interval after `start()`. */
  immediate?: boolean;
  /** Lets the process exit while a round is only scheduled (a timer that holds nothing open). */
  unref?: boolean;
}

/**
 * A job's schedule: one round at a time, the next `intervalMs` after the last ended (never
 * overlapping, so a slow round delays the next rather than racing it); a failed round is logged
 * and the next one retries. `poke()` asks for a round now (work just arrived): at once when idle,
 * right after the round in flight otherwise. `stop()` waits for a round in flight.
 */
export class Repeating<T> {
  private timer?: NodeJS.Timeout;
  private running?: Promise<unknown>;
  private stopped = true;
  private again = false;

  constructor(private readonly options: RepeatingOptions<T>) {}

  start(): void {
    if (this.options.intervalMs <= 0 || !this.stopped) return;
    this.stopped = false;
    this.schedule(this.options.immediate ? 0 : this.options.intervalMs);
  }

  /** A round now, or right after the one in flight; nothing once stopped. */
  poke(): void {
    if (this.stopped) return;
    if (this.running) this.again = true;
    else this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  private schedule(ms: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.running = this.options
        .run()
        .then((result) => this.options.done?.(result))
        .catch((err) => this.options.logger.warn(this.options.failure, { err }))
        .finally(() => {
          this.running = undefined;
          const next = this.again ? 0 : this.options.intervalMs;
          this.again = false;
          if (!this.stopped) this.schedule(next);
        });
    }, ms);
    if (this.options.unref) this.timer.unref();
  }
}
