import { TOPICS } from '@billstream/bus';
import type { Scope } from '@billstream/contracts';
import type { Db } from '@billstream/db';
import { newUlid } from '@billstream/ids';
import type { Logger } from '@billstream/logger';
import { newDomainEvent, writeOutbox } from '@billstream/outbox';
import type { InvoiceFinalizer } from '../invoices/finalizer';
import type { PeriodBilling } from '../invoices/period-billing';
import type { InvoiceStore } from '../invoices/store';
import { SUBSCRIPTION_EVENTS } from '../subscriptions/domain';
import type { SubscriptionStore } from '../subscriptions/store';
import { toSubscriptionView } from '../subscriptions/view';
import { drain, drainBatches } from './drain';

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

/** A retry of work a wallet outage or a crash left owed, of `scope` only when given; answers how much it did. */
interface Retry {
  retryOwed(requestId: string, scope?: Scope): Promise<number>;
}

/** A step that runs once a round over what is due now; answers how much it did. */
interface DueWork {
  runOnce(requestId: string, scope?: Scope): Promise<number>;
}

/**
 * What the workflow's steps are done with: the parts below it, each by what the step asks of it
 * (the folders of its own layer, top-ups, by the port the step declares).
 */
export interface ClosePeriodDeps {
  db: Db;
  subscriptions: SubscriptionStore;
  invoices: InvoiceStore;
  billing: Pick<PeriodBilling, 'catchUpMany'>;
  finalizer: Pick<InvoiceFinalizer, 'finalizeMany' | 'completeVoid' | 'markOverdue'>;
  /** Credit grants (ADR 0039, 0048): a batch's subscriptions, and every grant period due; answer how many were credited. */
  grants: {
    runFor(subscriptionIds: string[], requestId: string, leaseMs: number): Promise<{ applied: number }>;
    runOnce(requestId: string, leaseMs: number, scope?: Scope): Promise<{ applied: number }>;
  };
  /** Settles the credit of an invoiced top-up paid in full whose settle a crash or an outage interrupted (topups/). */
  topups: { settle(invoiceId: string, requestId: string): Promise<boolean> };
  /** Completes CREDITS payments a crash left pending. */
  payments: { completePending(requestId: string, scope?: Scope): Promise<number> };
  /** Credit notes (ADR 0041): credits the wallets of notes left `refund_status: pending`. */
  creditNotes: { retryPending(requestId: string, scope?: Scope): Promise<number> };
  /** Excess credits (ADR 0043) and what threshold invoices billed beyond the closing invoice (ADR 0046), left owed. */
  excessCredits: Retry;
  thresholdReturns: Retry;
  /** The HTTP tax provider (docs/api/taxes.md#http-provider): a draft not taxed yet, taxed now; answers whether it is. */
  draftTaxes: { pending(invoiceId: string): Promise<boolean> };
  /** Dunning (ADR 0044): the retry attempts of overdue invoices due now. */
  dunning: DueWork;
  /** Progressive billing (ADR 0046): threshold checks of the active subscriptions with thresholds. */
  thresholds: DueWork;
  logger: Logger;
  clock: () => Date;
  published: () => void;
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

/** One run of the workflow: its id, scope, lease and the counts its steps add to. */
interface Round {
  requestId: string;
  scope?: Scope;
  lease: number;
  result: PeriodJobResult;
}

/**
 * The "close a period" workflow (docs/api/billing.md#invoices, ADR 0063): one round of the
 * period job. `run` is its steps, in the order they run:
 *
 * 1. invoice the ended periods, finalize the drafts due, credit the grants of each finalized
 *    batch (the three overlap: a batch's drafts are finalized while the next batches are
 *    invoiced, and its grants follow, ADR 0048);
 * 1b. ask the HTTP tax provider for the drafts still `pending` (a grace window's) or `failed`
 *    whose backoff ended (docs/api/taxes.md#http-provider);
 * 2. complete the voids whose refund did not finish;
 * 3. settle the paid invoiced top-ups whose credit is not settled yet;
 * 4. complete the CREDITS payments a crash left pending;
 * 5. credit the wallets of credit notes left pending;
 * 6. credit the excess credits, then the threshold returns, left owed;
 * 7. credit the grant periods due (after the periods moved: they follow the same anchors);
 * 8. mark the invoices past their due date overdue;
 * 9. make the dunning attempts due;
 * 10. check the usage thresholds;
 * 11. send the renewal notices (SUBSCRIPTION_RENEWAL_NOTICE_DAYS before a period's end).
 *
 * Replicas never double: work is claimed with FOR UPDATE SKIP LOCKED and a lease, and every
 * step is idempotent on its own (unique keys, version checks, the wallet's allocation per
 * invoice), so a claim that expires after a crash is simply done again. With a scope
 * (`POST /v1/cron/bill-subscriptions`, ADR 0035) every step claims and counts that tenant's
 * and environment's work only.
 */
export class ClosePeriod {
  constructor(private readonly deps: ClosePeriodDeps) {}

  async run(scope?: Scope): Promise<PeriodJobResult> {
    const round: Round = { requestId: `period-job-${newUlid()}`, scope, lease: this.deps.leaseMs ?? LEASE_MS, result: emptyResult() };
    await this.invoiceFinalizeAndGrant(round);
    await this.taxPending(round);
    await this.completeVoids(round);
    await this.settleTopups(round);
    await this.deps.payments.completePending('period-job', scope);
    await this.deps.creditNotes.retryPending(round.requestId, scope);
    await this.deps.excessCredits.retryOwed(round.requestId, scope);
    await this.deps.thresholdReturns.retryOwed(round.requestId, scope);
    round.result.credit_grants_applied += (await this.deps.grants.runOnce(round.requestId, round.lease, scope)).applied;
    await this.markOverdue(round);
    await this.deps.dunning.runOnce(round.requestId, scope);
    await this.deps.thresholds.runOnce(round.requestId, scope);
    await this.sendRenewalNotices(round);
    return round.result;
  }

  /** Step 1: ended periods invoiced and drafts finalized, overlapping; each finalized batch's grants after it. */
  private async invoiceFinalizeAndGrant(round: Round): Promise<void> {
    const { db, logger, clock } = this.deps;
    const { requestId, scope, lease, result } = round;
    let making = true;
    const batches = Math.max(1, Math.ceil(this.concurrency() / 4));
    const make = drainBatches(
      () => this.deps.subscriptions.claimDue(db, clock(), lease, CLAIM_BATCH, scope),
      async (ids) => {
        for (const [id, done] of await this.deps.billing.catchUpMany(ids, requestId)) {
          if ('error' in done) {
            logger.warn('period job: billing a subscription failed; it is retried when its claim expires', { err: done.error, id });
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
      if (finalized.length === 0) return;
      grants = grants.then(async () => {
        try {
          const subscriptionIds = await this.deps.invoices.subscriptionsOf(db, finalized);
          result.credit_grants_applied += (await this.deps.grants.runFor(subscriptionIds, requestId, lease)).applied;
        } catch (err) {
          logger.warn('period job: the credit grants of finalized invoices failed; the grants step retries them', { err });
        }
      });
    };
    const finalize = drainBatches(
      () => this.deps.invoices.claim(db, 'drafts', clock(), lease, CLAIM_BATCH, scope),
      async (ids) => {
        const finalized: string[] = [];
        for (const [id, done] of await this.deps.finalizer.finalizeMany(ids, requestId, 'system')) {
          if ('error' in done) logger.warn('period job: finalizing an invoice failed; it is retried when its claim expires', { err: done.error, id });
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
    // Both settle before the step ends (a failing one must not leave the other running on).
    const settled = await Promise.allSettled([make, finalize]);
    await grants;
    for (const r of settled) if (r.status === 'rejected') throw r.reason;
  }

  /** Step 1b: drafts the HTTP tax provider has not taxed yet, asked now (a failed one after its backoff: its claim waits until then). */
  private taxPending(round: Round): Promise<void> {
    return this.drainClaimed(round, 'taxes', 'taxing a draft with the HTTP tax provider', async (id) => {
      await this.deps.draftTaxes.pending(id);
    });
  }

  /** Step 2: the credits of voided invoices given back where a crash or an outage stopped it. */
  private completeVoids(round: Round): Promise<void> {
    return this.drainClaimed(round, 'refunds', 'giving back the credits of a voided invoice', async (id) => {
      const voided = await this.deps.invoices.getById(this.deps.db, id);
      if (voided) await this.deps.finalizer.completeVoid(voided, round.requestId);
    });
  }

  /** Step 3: paid invoiced top-ups' credits settled. */
  private settleTopups(round: Round): Promise<void> {
    return this.drainClaimed(round, 'settles', 'settling the credit of a paid invoiced top-up', async (id) => {
      await this.deps.topups.settle(id, round.requestId);
    });
  }

  /** Step 8: finalized invoices past their due date marked overdue. */
  private markOverdue(round: Round): Promise<void> {
    return this.drainClaimed(round, 'overdue', 'marking an invoice overdue', async (id) => {
      if (await this.deps.finalizer.markOverdue(id)) round.result.invoices_marked_overdue += 1;
    });
  }

  /** Step 11: one `subscription.renewal.due` per period of each active subscription near its end. */
  private async sendRenewalNotices(round: Round): Promise<void> {
    for (let sent = await this.noticeBatch(round.scope); sent > 0; sent = await this.noticeBatch(round.scope)) round.result.renewal_notices += sent;
    if (round.result.renewal_notices > 0) this.deps.published();
  }

  private drainClaimed(round: Round, what: 'taxes' | 'refunds' | 'settles' | 'overdue', doing: string, work: (id: string) => Promise<void>): Promise<void> {
    const { db, clock } = this.deps;
    return drain(() => this.deps.invoices.claim(db, what, clock(), round.lease, CLAIM_BATCH, round.scope), work, doing, this.concurrency(), this.deps.logger);
  }

  private concurrency(): number {
    return this.deps.concurrency ?? 8;
  }

  /** Sends the renewal notices of up to one batch of subscriptions; answers how many. */
  private noticeBatch(scope?: Scope): Promise<number> {
    return this.deps.db.transaction(async (trx) => {
      const now = this.deps.clock();
      const due = await this.deps.subscriptions.renewalsDue(trx, now, this.deps.renewalNoticeDays * DAY_MS, NOTICE_BATCH, scope);
      let sent = 0;
      for (const s of due) {
        const ctx = { tenantId: s.tenantId, environmentId: s.environmentId, actor: 'system' };
        const event = newDomainEvent(SUBSCRIPTION_EVENTS.renewalDue, ctx, { subscription: toSubscriptionView(s) });
        if (!(await this.deps.subscriptions.recordRenewalNotice(trx, s.id, s.currentPeriodEnd!, event.id, now))) continue;
        await writeOutbox(trx, TOPICS.billingEvents, s.id, event);
        sent += 1;
      }
      return sent;
    });
  }
}

function emptyResult(): PeriodJobResult {
  return {
    subscriptions_billed: 0,
    periods_closed: 0,
    invoices_created: 0,
    invoices_finalized: 0,
    invoices_marked_overdue: 0,
    renewal_notices: 0,
    credit_grants_applied: 0,
  };
}
