import type { Scope } from '@billstream/contracts';
import type { Logger } from '@billstream/logger';
import { recordBillingRun } from '@billstream/observability';
import type { ClosePeriod, PeriodJobResult } from './close-period';

export type { PeriodJobResult } from './close-period';

export interface PeriodJobDeps {
  /** The "close a period" workflow: one round. */
  closePeriod: ClosePeriod;
  logger: Logger;
  /** How often a round runs (0 turns the schedule off). */
  intervalMs: number;
}

/**
 * The period job: the "close a period" workflow (`close-period.ts`) run every interval, and on
 * demand (`POST /v1/cron/bill-subscriptions`, ADR 0035, with the caller's scope); each run is
 * counted and timed.
 */
export class PeriodJob {
  private timer?: NodeJS.Timeout;
  private running?: Promise<unknown>;
  private stopped = true;

  constructor(private readonly deps: PeriodJobDeps) {}

  /**
   * One run; `billstream_billing_job_*` count it (success or failure), and time it and its
   * invoices when it found work (an idle tick every interval would bury the real runs). With
   * `scope`, only that tenant's and environment's subscriptions and invoices are worked on.
   */
  async runOnce(scope?: Scope): Promise<PeriodJobResult> {
    const started = process.hrtime.bigint();
    const seconds = () => Number(process.hrtime.bigint() - started) / 1e9;
    let result: PeriodJobResult;
    try {
      result = await this.deps.closePeriod.run(scope);
    } catch (err) {
      recordBillingRun('period', false, seconds(), 0);
      throw err;
    }
    if (Object.values(result).some((n) => n > 0)) recordBillingRun('period', true, seconds(), result.invoices_created);
    return result;
  }

  /** Runs the job every interval until stopped (0 turns the schedule off). */
  start(): void {
    if (this.deps.intervalMs <= 0 || !this.stopped) return;
    this.stopped = false;
    const schedule = () => {
      this.timer = setTimeout(() => {
        this.running = this.runOnce()
          .then((r) => {
            if (Object.values(r).some((n) => n > 0)) this.deps.logger.info('period job round', r);
          })
          .catch((err) => this.deps.logger.warn('subscription period round failed; will retry', { err }))
          .finally(() => {
            if (!this.stopped) schedule();
          });
      }, this.deps.intervalMs);
    };
    schedule();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }
}
