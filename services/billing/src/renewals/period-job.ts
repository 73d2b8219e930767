import type { Scope } from '@billstream/contracts';
import type { Logger } from '@billstream/logger';
import { recordBillingRun } from '@billstream/observability';
import { Repeating } from '@billstream/runtime';
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
  private readonly schedule: Repeating<PeriodJobResult>;

  constructor(private readonly deps: PeriodJobDeps) {
    this.schedule = new Repeating({
      run: () => this.runOnce(),
      intervalMs: deps.intervalMs,
      logger: deps.logger,
      failure: 'subscription period round failed; will retry',
      done: (r) => {
        if (Object.values(r).some((n) => n > 0)) deps.logger.info('period job round', r);
      },
    });
  }

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
    this.schedule.start();
  }

  async stop(): Promise<void> {
    await this.schedule.stop();
  }
}
