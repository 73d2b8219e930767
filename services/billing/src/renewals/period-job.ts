import { TOPICS } from '@billstream/bus';
import type { Db } from '@billstream/db';
import type { Logger } from '@billstream/logger';
import { newDomainEvent, writeOutbox } from '@billstream/outbox';
import { SUBSCRIPTION_EVENTS } from '../subscriptions/domain';
import { stepsUntil } from '../subscriptions/lifecycle';
import { announce } from '../subscriptions/service';
import type { SubscriptionStore } from '../subscriptions/store';
import { toSubscriptionView } from '../subscriptions/view';

export interface PeriodJobResult {
  subscriptions_advanced: number;
  periods_closed: number;
  renewal_notices: number;
}

export interface PeriodJobOptions {
  intervalMs: number;
  renewalNoticeDays: number;
}

const DAY_MS = 86_400_000;
const NOTICE_BATCH = 100;

/**
 * The period job: every subscription whose current period ended moves on (a trial turns
 * active, a cancel at the period end takes effect, any other one enters its next period), one
 * subscription per transaction with its event; then each active subscription within
 * SUBSCRIPTION_RENEWAL_NOTICE_DAYS of its period end gets one `subscription.renewal.due`.
 *
 * Replicas never double: due subscriptions are taken FOR UPDATE SKIP LOCKED, and a notice is
 * a row keyed by (subscription, period end) inserted with its outbox event in one
 * transaction. The invoice of a closed period (issue #13) belongs in `advanceOne`, in the
 * transaction that steps the period.
 */
export class PeriodJob {
  private timer?: NodeJS.Timeout;
  private running?: Promise<unknown>;
  private stopped = true;

  constructor(
    private readonly db: Db,
    private readonly subscriptions: SubscriptionStore,
    private readonly logger: Logger,
    private readonly clock: () => Date,
    private readonly published: () => void,
    private readonly options: PeriodJobOptions,
  ) {}

  async runOnce(): Promise<PeriodJobResult> {
    const result: PeriodJobResult = { subscriptions_advanced: 0, periods_closed: 0, renewal_notices: 0 };
    for (let closed = await this.advanceOne(); closed > 0; closed = await this.advanceOne()) {
      result.subscriptions_advanced += 1;
      result.periods_closed += closed;
    }
    for (let sent = await this.noticeBatch(); sent > 0; sent = await this.noticeBatch()) result.renewal_notices += sent;
    if (result.subscriptions_advanced + result.renewal_notices > 0) this.published();
    return result;
  }

  /** Steps one due subscription up to now; answers the periods it closed (0: none was due). */
  private advanceOne(): Promise<number> {
    return this.db.transaction(async (trx) => {
      const now = this.clock();
      const due = await this.subscriptions.nextDue(trx, now);
      if (!due) return 0;
      const steps = stepsUntil(due, now);
      const last = steps.at(-1);
      if (!last) return 0;
      const saved = await this.subscriptions.save(trx, last.subscription);
      const ctx = { tenantId: saved.tenantId, environmentId: saved.environmentId, actor: 'system' };
      await announce(trx, ctx, last.event, saved);
      return steps.length;
    });
  }

  /** Sends the renewal notices of up to one batch of subscriptions; answers how many. */
  private noticeBatch(): Promise<number> {
    return this.db.transaction(async (trx) => {
      const now = this.clock();
      const due = await this.subscriptions.renewalsDue(trx, now, this.options.renewalNoticeDays * DAY_MS, NOTICE_BATCH);
      let sent = 0;
      for (const s of due) {
        const ctx = { tenantId: s.tenantId, environmentId: s.environmentId, actor: 'system' };
        const event = newDomainEvent(SUBSCRIPTION_EVENTS.renewalDue, ctx, { subscription: toSubscriptionView(s) });
        if (!(await this.subscriptions.recordRenewalNotice(trx, s.id, s.currentPeriodEnd!, event.id, now))) continue;
        await writeOutbox(trx, TOPICS.billingEvents, s.id, event);
        sent += 1;
      }
      return sent;
    });
  }

  /** Runs the job every interval until stopped (0 turns the schedule off). */
  start(): void {
    if (this.options.intervalMs <= 0 || !this.stopped) return;
    this.stopped = false;
    const schedule = () => {
      this.timer = setTimeout(() => {
        this.running = this.runOnce()
          .then((r) => {
            if (r.subscriptions_advanced + r.renewal_notices > 0) this.logger.info('subscription periods advanced', r);
          })
          .catch((err) => this.logger.warn('subscription period round failed; will retry', { err }))
          .finally(() => {
            if (!this.stopped) schedule();
          });
      }, this.options.intervalMs);
    };
    schedule();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }
}
