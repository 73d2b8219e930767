import type { Scope } from '@billstream/contracts';
import type { Db, Trx } from '@billstream/db';
import { newId } from '@billstream/ids';
import { Exact, exact } from '@billstream/money';
import type { Logger } from '@billstream/logger';
import { payerOf, type Subscription } from '../subscriptions/domain';
import type { SubscriptionGrants } from '../subscriptions/grants';
import type { SubscriptionStore } from '../subscriptions/store';
import type { ApplicationStore } from './applications-store';
import type { ApplyOutcome, GrantApplier } from './applier';
import { applicationKey, SKIP_REASONS, type Application, type Binding, type CreditGrant } from './domain';
import { duePeriods, grantPeriodAt } from './schedule';
import type { CreditGrantStore } from './store';

const DAY_MS = 86_400_000;
const CLAIM_BATCH = 200;
/** Subscriptions whose periods one transaction records (as the period job's invoices: 50 a transaction). */
const RECORD_CHUNK = 50;

export interface GrantRunResult {
  /** Applications recorded (pending or skipped). */
  recorded: number;
  applied: number;
  skipped: number;
}

export interface CreditGrantBinderDeps {
  db: Db;
  grants: CreditGrantStore;
  applications: ApplicationStore;
  subscriptions: SubscriptionStore;
  applier: GrantApplier;
  logger: Logger;
  clock: () => Date;
}

/**
 * Which grants a subscription takes and which of their periods are due (ADR 0039). Every write
 * runs under the subscription's row lock, then the bindings' (the order the subscription
 * service and the period job both take): the subscription's creation and transitions through
 * the `SubscriptionGrants` port, and the period job for periods that start while nothing else
 * happens. A period is recorded once (unique grant, subscription and period start) and credited
 * by `GrantApplier` after the commit.
 */
export class CreditGrantBinder implements SubscriptionGrants {
  constructor(private readonly deps: CreditGrantBinderDeps) {}

  async created(trx: Trx, subscription: Subscription, now: Date): Promise<void> {
    const ofPlan = await this.deps.grants.activeOfPlanForShare(trx, subscription, subscription.planId);
    await this.deps.grants.insertBindings(trx, subscription, subscription.id, ofPlan.map((g) => ({ grantId: g.id, startsFrom: null })), now);
    await this.record(trx, [subscription], now);
  }

  async changed(trx: Trx, before: Subscription, after: Subscription, now: Date): Promise<void> {
    await this.record(trx, [before, after], now);
  }

  async planChanged(trx: Trx, before: Subscription, after: Subscription, at: Date, prorate: boolean): Promise<void> {
    await this.record(trx, [before], at);
    if (before.planId === after.planId) return;
    await this.deps.grants.unbindPlan(trx, before.id, before.planId);
    const ofPlan = await this.deps.grants.activeOfPlanForShare(trx, after, after.planId);
    await this.deps.grants.insertBindings(trx, after, after.id, ofPlan.map((g) => ({ grantId: g.id, startsFrom: at })), at);
    const now = this.deps.clock();
    const made: Application[] = [];
    for (const grant of ofPlan) {
      const period = grantPeriodAt(after, grant, at);
      if (!period) continue;
      if (grant.cadence === 'ONETIME') {
        made.push(this.application(grant, after, period, now));
        const [binding] = (await this.deps.grants.bindingsForUpdate(trx, after.id)).filter((b) => b.grantId === grant.id);
        if (binding) await this.deps.grants.saveCursor(trx, { ...binding, appliedThrough: period.start, nextDue: null });
      } else if (prorate && period.start.getTime() < at.getTime()) {
        // The part of the grant's current period left after the change, 12 decimals, half up (docs/api/credit-grants.md).
        const factor = exact(period.end.getTime() - at.getTime()).div(period.end.getTime() - period.start.getTime()).toDecimalPlaces(12, Exact.ROUND_HALF_UP);
        const credits = grant.credits.times(factor).toDecimalPlaces(12, Exact.ROUND_HALF_UP);
        if (credits.gt(0)) made.push({ ...this.application(grant, after, period, now), credits, description: `Credit grant ${grant.name} (${grant.id}) for subscription ${after.id}, prorated x ${factor.toFixed(12)} from ${at.toISOString()}` });
      }
    }
    await this.deps.applications.insertMany(trx, made);
    await this.record(trx, [after], at);
  }

  async settle(scope: Scope, subscriptionId: string, requestId: string): Promise<void> {
    const pending = await this.deps.applications.pendingOfSubscription(this.deps.db, scope, subscriptionId);
    await this.deps.applier.applyAll(pending, requestId);
  }

  /** Binds a grant made for one subscription (the caller holds the subscription's lock) from `startsFrom`, and records what is due. */
  async bindOne(trx: Trx, subscription: Subscription, grantId: string, startsFrom: Date | null, now: Date): Promise<void> {
    await this.deps.grants.insertBindings(trx, subscription, subscription.id, [{ grantId, startsFrom }], now);
    await this.record(trx, [subscription], now);
  }

  /**
   * Records, for each grant the subscription takes, the periods due in any of `states` (a
   * transition's before and after) not recorded yet, and moves the bindings' cursors; the next
   * due period is the last state's.
   */
  async record(trx: Trx, states: Subscription[], now: Date): Promise<number> {
    const last = states.at(-1)!;
    const bindings = await this.deps.grants.bindingsForUpdate(trx, last.id);
    if (bindings.length === 0) return 0;
    const grants = await this.deps.grants.getByIds(trx, bindings.map((b) => b.grantId));
    const { made, cursors } = this.due(states, bindings, grants, now);
    for (const cursor of cursors) await this.deps.grants.saveCursor(trx, cursor);
    await this.deps.applications.insertMany(trx, made);
    return made.length;
  }

  /**
   * `record` of several subscriptions in one transaction (the period job): their rows locked in
   * id order in one statement, then their bindings in one statement (the order every writer
   * takes), one insert of the applications and one update of the cursors. Answers how many
   * applications were recorded.
   */
  async recordMany(subscriptionIds: string[]): Promise<number> {
    return this.deps.db.transaction(async (trx) => {
      const locked = await this.deps.subscriptions.lockMany(trx, subscriptionIds);
      const bindings = await this.deps.grants.bindingsOfForUpdate(trx, locked.map((s) => s.id));
      if (bindings.length === 0) return 0;
      const grants = await this.deps.grants.getByIds(trx, [...new Set(bindings.map((b) => b.grantId))]);
      const at = this.deps.clock();
      const made: Application[] = [];
      const cursors: Binding[] = [];
      for (const s of locked) {
        const due = this.due([s], bindings.filter((b) => b.subscriptionId === s.id), grants, at);
        made.push(...due.made);
        cursors.push(...due.cursors);
      }
      await this.deps.grants.saveCursors(trx, cursors);
      await this.deps.applications.insertMany(trx, made);
      return made.length;
    });
  }

  /**
   * For each binding of the last state's subscription, the periods due in any of `states` (a
   * transition's before and after) as applications, and the cursors that moved; the next due
   * period is the last state's.
   */
  private due(states: Subscription[], bindings: Binding[], grants: Map<string, CreditGrant>, now: Date): { made: Application[]; cursors: Binding[] } {
    const last = states.at(-1)!;
    const made: Application[] = [];
    const cursors: Binding[] = [];
    for (const binding of bindings) {
      const grant = grants.get(binding.grantId)!;
      const starts = new Map<number, { start: Date; end: Date }>();
      let nextDue: Date | null = null;
      for (const s of states) {
        const due = duePeriods(s, grant, binding, now);
        for (const p of due.periods) starts.set(p.start.getTime(), p);
        nextDue = due.nextDue;
      }
      const periods = [...starts.values()].sort((a, b) => a.start.getTime() - b.start.getTime());
      for (const p of periods) made.push(this.application(grant, last, p, now));
      const appliedThrough = periods.at(-1)?.start ?? binding.appliedThrough;
      if (appliedThrough !== binding.appliedThrough || nextDue?.getTime() !== binding.nextDue?.getTime()) {
        cursors.push({ ...binding, appliedThrough, nextDue } satisfies Binding);
      }
    }
    return { made, cursors };
  }

  private application(grant: CreditGrant, s: Subscription, period: { start: Date; end: Date }, now: Date): Application {
    const expiryDate = grant.expireInDays === null ? null : new Date(period.start.getTime() + grant.expireInDays * DAY_MS);
    const expired = expiryDate !== null && expiryDate.getTime() <= now.getTime();
    return {
      id: newId('creditGrantApplication'),
      tenantId: s.tenantId,
      environmentId: s.environmentId,
      grantId: grant.id,
      subscriptionId: s.id,
      // The payer's wallet takes the grant (docs/api/hierarchy-billing.md).
      customerId: payerOf(s),
      currency: s.currency,
      periodStart: period.start,
      periodEnd: period.end,
      credits: grant.credits,
      expiryDate,
      priority: grant.priority,
      conversionRate: grant.conversionRate ?? exact('1'),
      description: `Credit grant ${grant.name} (${grant.id}) for subscription ${s.id}, period from ${period.start.toISOString()}`,
      idempotencyKey: applicationKey(grant.id, s.id, period.start),
      status: expired ? 'skipped' : 'pending',
      skipReason: expired ? SKIP_REASONS.expired : null,
      walletId: null,
      walletTransactionId: null,
      attempts: 0,
      nextAttemptAt: expired ? null : now,
      appliedAt: null,
      createdAt: now,
      updatedAt: now,
    };
  }

  /**
   * The period job's part (ADR 0039, 0048): records the periods that started since the bindings'
   * cursors (claims with a lease, then one transaction per RECORD_CHUNK subscriptions under their
   * locks), then credits every pending application whose attempt is due (claims with a lease: a
   * failed one waits for its lease to pass), MAX_CREDITS_PER_BATCH a wallet call. With `scope`,
   * that tenant's and environment's only.
   */
  async runOnce(requestId: string, leaseMs: number, scope?: Scope): Promise<GrantRunResult> {
    const result: GrantRunResult = { recorded: 0, applied: 0, skipped: 0 };
    for (let ids = await this.deps.grants.claimDue(this.deps.db, this.deps.clock(), leaseMs, CLAIM_BATCH, scope); ids.length > 0; ids = await this.deps.grants.claimDue(this.deps.db, this.deps.clock(), leaseMs, CLAIM_BATCH, scope)) {
      result.recorded += await this.recordChunks(ids);
    }
    for (let ids = await this.deps.applications.claimPending(this.deps.db, this.deps.clock(), leaseMs, CLAIM_BATCH, scope); ids.length > 0; ids = await this.deps.applications.claimPending(this.deps.db, this.deps.clock(), leaseMs, CLAIM_BATCH, scope)) {
      count(result, await this.deps.applier.applyAll(await this.deps.applications.getByIds(this.deps.db, ids), requestId));
    }
    return result;
  }

  /**
   * The grants of subscriptions the period job has just invoiced and finalized (ADR 0048): the
   * periods due of their bindings (claimed, so that no replica records them at once), then their
   * pending applications credited. What fails is left to `runOnce`.
   */
  async runFor(subscriptionIds: string[], requestId: string, leaseMs: number): Promise<GrantRunResult> {
    const result: GrantRunResult = { recorded: 0, applied: 0, skipped: 0 };
    const claimed = await this.deps.grants.claimDueOf(this.deps.db, subscriptionIds, this.deps.clock(), leaseMs);
    result.recorded = await this.recordChunks(claimed);
    const pending = await this.deps.applications.claimPendingOf(this.deps.db, subscriptionIds, this.deps.clock(), leaseMs);
    count(result, await this.deps.applier.applyAll(pending, requestId));
    return result;
  }

  /** `recordMany` of RECORD_CHUNK subscriptions at a time; a failed chunk is logged and retried when its claim expires. */
  private async recordChunks(ids: string[]): Promise<number> {
    let recorded = 0;
    for (let at = 0; at < ids.length; at += RECORD_CHUNK) {
      const chunk = ids.slice(at, at + RECORD_CHUNK);
      try {
        recorded += await this.recordMany(chunk);
      } catch (err) {
        this.deps.logger.warn('credit grants: recording due periods failed; retried when the claim expires', { err, subscription_ids: chunk });
      }
    }
    return recorded;
  }
}

function count(result: GrantRunResult, outcomes: ApplyOutcome[]): void {
  result.applied += outcomes.filter((o) => o === 'applied').length;
  result.skipped += outcomes.filter((o) => o === 'skipped').length;
}
