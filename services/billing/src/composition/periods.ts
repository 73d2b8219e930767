/**
 * The period job's composition: the "close a period" workflow given the parts its steps are done
 * with, and the job that runs it every interval (ADR 0063).
 */
import type { Db } from '@billstream/db';
import type { Logger } from '@billstream/logger';
import type { BillingSettings } from '../config';
import { ClosePeriod, type ClosePeriodDeps } from '../renewals/close-period';
import { PeriodJob } from '../renewals/period-job';

export type PeriodParts = Omit<ClosePeriodDeps, 'db' | 'logger' | 'clock' | 'published' | 'renewalNoticeDays' | 'leaseMs' | 'concurrency'>;

export function composePeriodJob(base: { db: Db; logger: Logger; clock: () => Date; published: () => void; settings: BillingSettings }, parts: PeriodParts): PeriodJob {
  const { db, logger, clock, published, settings } = base;
  const closePeriod = new ClosePeriod({
    ...parts,
    db,
    logger,
    clock,
    published,
    renewalNoticeDays: settings.renewalNoticeDays,
    leaseMs: settings.leaseMs,
    concurrency: settings.concurrency,
  });
  return new PeriodJob({ closePeriod, logger, intervalMs: settings.intervalMs });
}
