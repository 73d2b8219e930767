import { TOPICS } from '@billstream/bus';
import type { Scope } from '@billstream/contracts';
import type { Db } from '@billstream/db';
import type { Logger } from '@billstream/logger';
import { recordBillingRun } from '@billstream/observability';
import { newDomainEvent, writeOutbox } from '@billstream/outbox';
import { newUlid } from '@billstream/ids';
import type { InvoiceFinalizer } from '../invoices/finalizer';
import type { PeriodBilling } from '../invoices/period-billing';
import type { InvoiceStore } from '../invoices/store';
import { SUBSCRIPTION_EVENTS } from '../subscriptions/domain';
import type { SubscriptionStore } from '../subscriptions/store';
import { toSubscriptionView } from '../subscriptions/view';

export interface PeriodJobResult {
  subscriptions_billed: number;
  periods_closed: number;
  invoices_created: number;
  invoices_finalized: number;
  invoices_marked_overdue: number;
  renewal_notices: number;
  /** Credit grant periods credited to wallets in this run (ADR 0039). */
  credit_grants_applied: number;
}

export interface PeriodJobOptions {
  intervalMs: number;
  renewalNoticeDays: number;
  /** How long a claim keeps other replicas off a subscription or invoice (default LEASE_MS). */
  leaseMs?: number;
  /** Subscriptions or invoices worked on at once (each is HTTP calls plus one transaction). */
  concurrency?: number;
}

const DAY_MS = 86_400_000;
const NOTICE_BATCH = 100;
const CLAIM_BATCH = 200;
/** How long a claim keeps other replicas off a subscription or invoice by default; a crash's claim expires. */
const LEASE_MS = 60_000;

export interface PeriodJobParts {
  billing: PeriodBilling;
  finalizer: InvoiceFinalizer;
  invoices: InvoiceStore;
  /** Completes CREDITS payments a crash left pending (Payments), of `scope` only when given. */
  completePendingPayments?: (scope?: Scope) => Promise<number>;
  /** Settles the credit of an invoiced top-up paid in full whose settle a crash or an outage interrupted. */
  settleTopup?: (invoiceId: string, requestId: string) => Promise<boolean>;
  /**
   * Credit grants (ADR 0039): records the grant periods that started since the last run and
   * credits pending applications (those a wallet outage or a crash left included); answers how
   * many were credited.
   */
  creditGrants?: (requestId: string, leaseMs: number, scope?: Scope) => Promise<number>;
  /**
   * Credit grants of subscriptions whose invoices this round has just finalized (ADR 0048):
   * their due periods recorded and credited while later batches are still invoiced; answers
   * how many were credited. What it leaves, `creditGrants` takes after the invoices.
   */
  creditGrantsOf?: (subscriptionIds: string[], requestId: string, leaseMs: number) => Promise<number>;
  /** Credit notes (ADR 0041): credits the wallets of notes a wallet outage or a crash left `refund_status: pending`. */
  creditNoteRefunds?: (requestId: string, scope?: Scope) => Promise<number>;
  /** Progressive billing (ADR 0046): threshold checks of the active subscriptions with thresholds; answers how many invoices were made. */
  thresholds?: (requestId: string, scope?: Scope) => Promise<number>;
  /** Dunning (ADR 0044): the retry attempts of overdue invoices due now, as PENDING PROVIDER payments; answers how many were made. */
  dunning?: (requestId: string, scope?: Scope) => Promise<number>;
  /** Excess credits (ADR 0043): credits the wallets of finalized invoices whose excess credit a wallet outage or a crash left owed. */
  excessCredits?: (requestId: string, scope?: Scope) => Promise<number>;
}

/**
 * The period job (docs/api/billing.md#invoices): every subscription whose current period ended is
 * invoiced and moved on (PeriodBilling, one transaction per subscription); drafts whose
 * BILLING_FINALIZE_DELAY passed are finalized (crash leftovers included); voids whose refund
 * did not finish are completed; paid invoiced top-ups whose credit is not settled yet are settled; finalized invoices past their due date are marked overdue;
 * active subscriptions within SUBSCRIPTION_RENEWAL_NOTICE_DAYS of their period end get one
 * `subscription.renewal.due`.
 *
 * Replicas never double: work is claimed with FOR UPDATE SKIP LOCKED and a lease, and every
 * step is idempotent on its own (unique keys, version checks, the wallet's allocation per
 * invoice), so a claim that expires after a crash is simply done again.
 *
 * The schedule runs every tenant's work; a run with a scope (`POST /v1/cron/bill-subscriptions`,
 * ADR 0035) claims and counts that tenant's and environment's only.
 */
export class PeriodJob {
  private timer?: NodeJS.Timeout;
  private running?: Promise<unknown>;
  private stopped = true;

  constructor(
    private readonly db: Db,
    private readonly subscriptions: SubscriptionStore,
    private readonly parts: PeriodJobParts,
    private readonly logger: Logger,
    private readonly clock: () => Date,
    private readonly published: () => void,
    private readonly options: PeriodJobOptions,
  ) {}

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
      result = await this.round(scope);
    } catch (err) {
      recordBillingRun('period', false, seconds(), 0);
      throw err;
    }
    if (Object.values(result).some((n) => n > 0)) recordBillingRun('period', true, seconds(), result.invoices_created);
    return result;
  }

  private async round(scope?: Scope): Promise<PeriodJobResult> {
    const result: PeriodJobResult = {
      subscriptions_billed: 0,
      periods_closed: 0,
      invoices_created: 0,
      invoices_finalized: 0,
      invoices_marked_overdue: 0,
      renewal_notices: 0,
      credit_grants_applied: 0,
    };
    const requestId = `period-job-${newUlid()}`;
    const lease = this.options.leaseMs ?? LEASE_MS;
    // Making drafts and finalizing them overlap: the drafts of a claimed batch are finalized
    // while the next batches of subscriptions are invoiced.
    let making = true;
    const batches = Math.max(1, Math.ceil((this.options.concurrency ?? 8) / 4));
    const make = this.drainBatches(
      () => this.subscriptions.claimDue(this.db, this.clock(), lease, CLAIM_BATCH, scope),
      async (ids) => {
        for (const [id, done] of await this.parts.billing.catchUpMany(ids, requestId)) {
          if ('error' in done) {
            this.logger.warn('period job: billing a subscription failed; it is retried when its claim expires', { err: done.error, id });
            continue;
          }
          if (done.periods > 0) result.subscriptions_billed += 1;
          result.periods_closed += done.periods;
          result.invoices_created += done.invoices;
        }
      },
      batches,
    ).finally(() => {
      making = false;
    });
    // The grants of the subscriptions of each finalized batch follow it, one batch at a time,
    // while the next batches are invoiced (ADR 0048): after the invoice's allocation, as before.
    let grants: Promise<void> = Promise.resolve();
    const grantsAfter = (finalized: string[]) => {
      const { creditGrantsOf } = this.parts;
      if (!creditGrantsOf || finalized.length === 0) return;
      grants = grants.then(async () => {
        try {
          const subscriptionIds = await this.parts.invoices.subscriptionsOf(this.db, finalized);
          result.credit_grants_applied += await creditGrantsOf(subscriptionIds, requestId, lease);
        } catch (err) {
          this.logger.warn('period job: the credit grants of finalized invoices failed; the grants step retries them', { err });
        }
      });
    };
    const finalize = this.drainBatches(
      () => this.parts.invoices.claim(this.db, 'drafts', this.clock(), lease, CLAIM_BATCH, scope),
      async (ids) => {
        const finalized: string[] = [];
        for (const [id, done] of await this.parts.finalizer.finalizeMany(ids, requestId, 'system')) {
          if ('error' in done) this.logger.warn('period job: finalizing an invoice failed; it is retried when its claim expires', { err: done.error, id });
          else if (done.finalized) {
            result.invoices_finalized += 1;
            finalized.push(id);
          }
        }
        grantsAfter(finalized);
      },
      batches,
      () => making,
    );
    // Both settle before the round ends (a failing one must not leave the other running on).
    const settled = await Promise.allSettled([make, finalize]);
    await grants;
    for (const r of settled) if (r.status === 'rejected') throw r.reason;
    await this.drain(
      () => this.parts.invoices.claim(this.db, 'refunds', this.clock(), lease, CLAIM_BATCH, scope),
      async (id) => {
        const voided = await this.parts.invoices.getById(this.db, id);
        if (voided) await this.parts.finalizer.completeVoid(voided, requestId);
      },
      'giving back the credits of a voided invoice',
    );
    const { settleTopup } = this.parts;
    if (settleTopup) {
      await this.drain(
        () => this.parts.invoices.claim(this.db, 'settles', this.clock(), lease, CLAIM_BATCH, scope),
        async (id) => {
          await settleTopup(id, requestId);
        },
        'settling the credit of a paid invoiced top-up',
      );
    }
    if (this.parts.completePendingPayments) await this.parts.completePendingPayments(scope);
    if (this.parts.creditNoteRefunds) await this.parts.creditNoteRefunds(requestId, scope);
    if (this.parts.excessCredits) await this.parts.excessCredits(requestId, scope);
    // After the subscriptions' periods moved: grant periods follow the same anchors.
    if (this.parts.creditGrants) result.credit_grants_applied += await this.parts.creditGrants(requestId, lease, scope);
    await this.drain(
      () => this.parts.invoices.claim(this.db, 'overdue', this.clock(), lease, CLAIM_BATCH, scope),
      async (id) => {
        if (await this.parts.finalizer.markOverdue(id)) result.invoices_marked_overdue += 1;
      },
      'marking an invoice overdue',
    );
    if (this.parts.dunning) await this.parts.dunning(requestId, scope);
    if (this.parts.thresholds) await this.parts.thresholds(requestId, scope);
    for (let sent = await this.noticeBatch(scope); sent > 0; sent = await this.noticeBatch(scope)) result.renewal_notices += sent;
    if (result.renewal_notices > 0) this.published();
    return result;
  }

  /**
   * Claims batches until none is left and works on each item, `concurrency` at once. A failing
   * item is logged and left to its lease's expiry (a later run retries it).
   */
  private async drain(claim: () => Promise<string[]>, work: (id: string) => Promise<void>, what: string): Promise<void> {
    const concurrency = this.options.concurrency ?? 8;
    for (let ids = await claim(); ids.length > 0; ids = await claim()) {
      let next = 0;
      const worker = async () => {
        while (next < ids.length) {
          const id = ids[next++]!;
          try {
            await work(id);
          } catch (err) {
            this.logger.warn(`period job: ${what} failed; it is retried when its claim expires`, { err, id });
          }
        }
      };
      await Promise.all(Array.from({ length: Math.min(concurrency, ids.length) }, worker));
    }
  }

  /**
   * Claims batches until none is left, `parallel` batches at once, each worked on as a whole
   * (its items' failures are the work's to log). While `more()` says more may come, an empty
   * claim waits a moment and claims again.
   */
  private async drainBatches(claim: () => Promise<string[]>, work: (ids: string[]) => Promise<void>, parallel: number, more: () => boolean = () => false): Promise<void> {
    const loop = async () => {
      for (;;) {
        const ids = await claim();
        if (ids.length > 0) await work(ids);
        else if (more()) await new Promise((resolve) => setTimeout(resolve, 100));
        else return;
      }
    };
    await Promise.all(Array.from({ length: parallel }, loop));
  }

  /** Sends the renewal notices of up to one batch of subscriptions; answers how many. */
  private noticeBatch(scope?: Scope): Promise<number> {
    return this.db.transaction(async (trx) => {
      const now = this.clock();
      const due = await this.subscriptions.renewalsDue(trx, now, this.options.renewalNoticeDays * DAY_MS, NOTICE_BATCH, scope);
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
            if (Object.values(r).some((n) => n > 0)) this.logger.info('period job round', r);
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
