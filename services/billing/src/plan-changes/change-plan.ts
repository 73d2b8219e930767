import type { SubscriptionResponse } from '@billstream/contracts';
import type { Db, Trx } from '@billstream/db';
import { IdempotencyConflictError, ServiceUnavailableError, ValidationError } from '@billstream/errors';
import { newId } from '@billstream/ids';
import type { EventContext } from '@billstream/outbox';
import { failpoint } from '@billstream/runtime';
import type { Invoice } from '../invoices/domain';
import type { InvoiceStore } from '../invoices/store';
import { planNotFound } from '../plans/service';
import type { PlanStore } from '../plans/store';
import type { Price } from '../prices/domain';
import type { PriceStore } from '../prices/store';
import { currentPlanSince, SUBSCRIPTION_EVENTS, type PendingChange, type Subscription } from '../subscriptions/domain';
import { announce, subscriptionNotFound } from '../subscriptions/events';
import type { SubscriptionGrants } from '../subscriptions/grants';
import { runFrom, stepsUntil } from '../subscriptions/lifecycle';
import { termsOf, type Terms } from '../subscriptions/plan-terms';
import { withOverrides } from '../subscriptions/price-overrides';
import type { SubscriptionStore } from '../subscriptions/store';
import { toSubscriptionView } from '../subscriptions/view';
import type { ChangeRecord, PlanChange } from './domain';
import type { ChangeInvoicer, PreparedChangeInvoice } from './invoice';
import type { ChangeStore } from './store';

export type Ctx = EventContext & { requestId: string };

export interface PlanChangeDeps {
  db: Db;
  subscriptions: SubscriptionStore;
  plans: PlanStore;
  prices: PriceStore;
  changes: ChangeStore;
  invoices: InvoiceStore;
  invoicer: ChangeInvoicer;
  /** Invoices a subscription's ended periods first (the period job's catch-up). */
  billing: { catchUp(subscriptionId: string, requestId: string): Promise<unknown> };
  /**
   * Finalizes the subscription's drafts (as the period job would) before a change with
   * prorations: the credit is then split by what the credited invoice was paid (ADR 0056).
   */
  finalizer: { finalize(draft: Invoice, requestId: string, actor: string): Promise<unknown> };
  grants?: SubscriptionGrants;
  /**
   * The HTTP provider's tax when the settings name it (docs/api/taxes.md#http-provider), asked with no
   * transaction open: of a preview's invoice after its transaction rolled back, and of the change's
   * draft once committed (so the change answers what its preview showed); absent: as made.
   */
  taxes?: { preview<T extends Invoice>(shown: T): Promise<T>; atDraft(draft: Invoice): Promise<Invoice> };
  clock: () => Date;
  published: () => void;
}

export interface ChangeResult {
  /** The subscription as the change left it (a retry answers it again, as it was then). */
  subscription: SubscriptionResponse;
  invoice: Invoice | null;
}

/** A preview's answer: what the change would have written, rolled back. */
class Preview extends Error {
  constructor(
    readonly result: ChangeResult,
    readonly at: Date,
  ) {
    super('preview');
  }
}

/** The key was taken by a concurrent call: this transaction rolls back and the call answers as a retry. */
class KeyTaken extends Error {}

const ATTEMPTS = 5;

/** What one attempt works out before its transaction. */
interface Prepared {
  current: Subscription;
  now: Date;
  plan: { id: string; terms: Terms };
  changeId: string;
  billed: ReturnType<typeof withOverrides>;
  immediate: boolean;
  prorate: boolean;
  after: Subscription;
  invoice?: PreparedChangeInvoice;
}

/**
 * The "change a plan" workflow (docs/api/plan-changes.md, ADR 0043, ADR 0063). `change` is its
 * steps, in the order they run:
 *
 * 1. a retry with the key answers the first change's answer (or refuses another body);
 * 2. the subscription, its ended periods invoiced first, if it can change (`current`);
 * 3. the new plan's terms (`checked`), its price overrides made (`withOverrides`), and the
 *    subscription as the change leaves it: switched now, or the change kept pending;
 * 4. with prorations, the subscription's drafts finalized (a credit is split by what was paid);
 * 5. the SUBSCRIPTION_UPDATE invoice prepared, the old plan's usage read (outside any transaction);
 * 6. the commit, under the subscription's row lock if it did not change meanwhile (else from 2
 *    again): the plan share-locked, the prices, the swap and its event, the invoice, the grants,
 *    the change record bound to its key;
 * 7. after the commit: the outbox relay nudged and the grants credited.
 *
 * A preview runs steps 2 to 6 and rolls the transaction back: nothing is stored, debited or published.
 */
export class ChangePlan {
  constructor(private readonly deps: PlanChangeDeps) {}

  async change(ctx: Ctx, id: string, change: PlanChange): Promise<ChangeResult> {
    if (change.idempotencyKey) {
      const earlier = await this.deps.changes.getByKey(this.deps.db, ctx, change.idempotencyKey);
      if (earlier) return this.replay(earlier, change.requestHash);
    }
    try {
      const result = await this.run(ctx, id, change, false);
      if ('replayed' in result) return result.replayed;
      // Crash point of the exactly-once proof: the change committed, the client not answered, the grants not credited.
      failpoint('plan-changes.after-commit');
      this.deps.published();
      await this.deps.grants?.settle(ctx, id, ctx.requestId);
      if (result.invoice?.status === 'draft' && result.invoice.taxStatus === 'pending' && this.deps.taxes) return { ...result, invoice: await this.deps.taxes.atDraft(result.invoice) };
      return result;
    } catch (err) {
      if (!(err instanceof KeyTaken)) throw err;
      return this.replay((await this.deps.changes.getByKey(this.deps.db, ctx, change.idempotencyKey!))!, change.requestHash);
    }
  }

  /** The answer the change would give now, with nothing stored: the same steps, the transaction rolled back. */
  async preview(ctx: Ctx, id: string, change: PlanChange): Promise<ChangeResult & { effectiveAt: Date }> {
    try {
      await this.run(ctx, id, { ...change, idempotencyKey: undefined }, true);
    } catch (err) {
      if (err instanceof Preview) {
        // The transaction is rolled back: the provider may be asked now (never inside one).
        const invoice = err.result.invoice && this.deps.taxes ? await this.deps.taxes.preview(err.result.invoice) : err.result.invoice;
        return { ...err.result, invoice, effectiveAt: err.at };
      }
      throw err;
    }
    throw new Error('a preview always rolls back');
  }

  /** Step 1: the first change's answer: the subscription as it left it (it may have moved on since), the invoice as it is now. */
  private async replay(earlier: ChangeRecord, hash: string): Promise<ChangeResult> {
    if (earlier.requestHash !== hash) {
      throw new IdempotencyConflictError('This idempotency_key was already used with another change', { field: 'idempotency_key', change_id: earlier.id });
    }
    const invoice = earlier.invoiceId ? ((await this.deps.invoices.getById(this.deps.db, earlier.invoiceId)) ?? null) : null;
    return { subscription: earlier.subscription, invoice };
  }

  /** Steps 2 to 6, again while the subscription changes under it. */
  private async run(ctx: Ctx, id: string, change: PlanChange, preview: boolean): Promise<ChangeResult | { replayed: ChangeResult }> {
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      // A concurrent call with the same key may have changed the subscription meanwhile: its answer is this one's.
      const earlier = attempt > 0 && change.idempotencyKey ? await this.deps.changes.getByKey(this.deps.db, ctx, change.idempotencyKey) : undefined;
      if (earlier) return { replayed: await this.replay(earlier, change.requestHash) };
      const current = await this.current(ctx, id);
      const now = changeInstant(current, this.deps.clock());
      if (stepsUntil(current, now).length > 0) continue;
      const plan = await this.checked(ctx, current, change);
      const changeId = newId('subscriptionChange');
      const billed = withOverrides(id, plan.terms.prices, change.priceOverrides ?? []);
      const immediate = change.effective === 'immediately';
      const after = immediate ? switchedNow(current, plan.terms, billed.overrides, change, now) : withPending(current, plan.terms, billed, change, changeId, now);
      const prorate = change.prorationBehavior === 'create_prorations';
      // A draft has nothing paid nor due yet: finalized first, its unused time lowers what it has due (a preview stores nothing: it takes a draft as unpaid).
      if (immediate && prorate && current.status === 'active' && !preview && attempt === 0) await this.finalizeDrafts(id, ctx.requestId);
      const invoice: PreparedChangeInvoice | undefined =
        immediate && current.status === 'active'
          ? await this.deps.invoicer.prepare(current, after, await this.deps.prices.ofSubscription(this.deps.db, current, id), billed.prices, now, changeId, prorate, ctx.requestId)
          : undefined;
      const result = await this.commit(ctx, id, change, { current, now, plan, changeId, billed, immediate, prorate, after, invoice }, preview);
      if (result) return result;
    }
    throw new ServiceUnavailableError(`Subscription ${id} kept changing; retry`);
  }

  /** Step 2: the subscription with its ended periods invoiced, if it can change (active or trialing, not cancelling). */
  private async current(ctx: Ctx, id: string): Promise<Subscription> {
    let s = await this.deps.subscriptions.get(this.deps.db, ctx, id);
    if (!s) throw subscriptionNotFound(id);
    if (stepsUntil(s, this.deps.clock()).length > 0) {
      await this.deps.billing.catchUp(id, ctx.requestId);
      s = (await this.deps.subscriptions.get(this.deps.db, ctx, id)) ?? s;
    }
    if (s.status !== 'active' && s.status !== 'trialing') {
      throw new ValidationError(`Cannot change the plan of a subscription that is ${s.status}`, { field: 'status', status: s.status, subscription_id: id });
    }
    if (s.cancelAtPeriodEnd) {
      throw new ValidationError('Cannot change the plan of a subscription that cancels at the end of its period', { field: 'status', status: s.status, subscription_id: id });
    }
    return s;
  }

  /** Step 3: the new plan's terms: its active prices in the subscription's currency, of the billing period asked (default: the current one, else the plan's only one). */
  private async checked(ctx: Ctx, s: Subscription, change: PlanChange): Promise<{ id: string; terms: Terms }> {
    const plan = await this.deps.plans.get(this.deps.db, ctx, change.planId);
    if (!plan) throw planNotFound(change.planId, 'plan_id');
    if (plan.status === 'archived') throw planArchived(plan.id);
    const active = ((await this.deps.prices.ofPlans(this.deps.db, ctx, [plan.id])).get(plan.id) ?? []).filter((p) => p.status === 'active');
    const inCurrency = active.filter((p) => p.currency === s.currency);
    if (inCurrency.length === 0) {
      throw new ValidationError(`Plan ${plan.id} has no active price in ${s.currency}, the subscription's currency (it never changes)`, { field: 'plan_id', plan_id: plan.id });
    }
    const period = change.billingPeriod ?? (inCurrency.some((p) => p.billingPeriod === s.billingPeriod) ? s.billingPeriod : undefined);
    const terms = termsOf(plan.id, inCurrency, s.currency, period);
    if (plan.id === s.planId && terms.billingPeriod === s.billingPeriod && terms.billingPeriodCount === s.billingPeriodCount && !change.priceOverrides) {
      throw new ValidationError(`The subscription already bills plan ${plan.id} ${terms.billingPeriod}: nothing to change`, { field: 'plan_id', plan_id: plan.id });
    }
    return { id: plan.id, terms };
  }

  /** Step 4: the subscription's drafts finalized, as the period job would. */
  private async finalizeDrafts(subscriptionId: string, requestId: string): Promise<void> {
    for (const draft of await this.deps.invoices.draftsOf(this.deps.db, subscriptionId)) await this.deps.finalizer.finalize(draft, requestId, 'system');
  }

  /** Step 6: everything of the change in one transaction under the row lock; undefined when the subscription changed meanwhile. */
  private commit(ctx: Ctx, id: string, change: PlanChange, p: Prepared, preview: boolean): Promise<ChangeResult | undefined> {
    return this.deps.db.transaction(async (trx) => {
      const locked = await this.deps.subscriptions.getForUpdate(trx, ctx, id);
      if (!locked) throw subscriptionNotFound(id);
      if (locked.version !== p.current.version) return undefined;
      const shared = await this.deps.plans.getForShare(trx, ctx, p.plan.id);
      if (!shared || shared.status === 'archived') throw planArchived(p.plan.id);
      await this.deps.prices.insert(trx, p.billed.made);
      if (p.immediate) await this.deps.subscriptions.replacePrices(trx, id, p.billed.prices.map((x) => x.id));
      const saved = await this.deps.subscriptions.save(trx, p.after);
      await announce(trx, ctx, SUBSCRIPTION_EVENTS.updated, saved);
      const made = p.invoice ? await p.invoice.write(trx) : null;
      if (p.immediate) await this.deps.grants?.planChanged(trx, p.current, saved, p.now, p.prorate && p.current.status === 'active');
      const view = toSubscriptionView(saved);
      await this.record(trx, ctx, { changeId: p.changeId, change, current: p.current, saved, view, invoice: made, now: p.now });
      const answer = { subscription: view, invoice: made };
      if (preview) throw new Preview(answer, p.now);
      // Crash point of the exactly-once proof (ADR 0017): everything written, nothing committed.
      failpoint('plan-changes.before-commit');
      return answer;
    });
  }

  private async record(
    trx: Trx,
    ctx: Ctx,
    c: { changeId: string; change: PlanChange; current: Subscription; saved: Subscription; view: SubscriptionResponse; invoice: Invoice | null; now: Date },
  ): Promise<void> {
    const inserted = await this.deps.changes.insert(trx, {
      id: c.changeId,
      tenantId: ctx.tenantId,
      environmentId: ctx.environmentId,
      subscriptionId: c.saved.id,
      idempotencyKey: c.change.idempotencyKey ?? null,
      requestHash: c.change.requestHash,
      effective: c.change.effective,
      effectiveAt: c.change.effective === 'immediately' ? c.now : c.saved.pendingChange!.effectiveAt,
      fromPlanId: c.current.planId,
      toPlanId: c.change.planId,
      invoiceId: c.invoice?.id ?? null,
      subscription: c.view,
      createdAt: c.now,
    });
    if (!inserted) throw new KeyTaken();
  }
}

function planArchived(id: string): ValidationError {
  return new ValidationError(`Plan ${id} is archived: it takes no new subscriptions`, { field: 'plan_id', plan_id: id });
}

/**
 * The one instant of a change made at `clock` (docs/api/plan-changes.md): its whole second
 * (the fraction dropped, as clients that stamp usage in seconds send it), never before where the
 * current plan's charges start (the period start or the last change). The change invoice's
 * period_end, the new lines' period_start, the subscription's new period start or last change,
 * the change's effective_at and its events all carry this value.
 */
export function changeInstant(s: Pick<Subscription, 'currentPeriodStart' | 'currentPeriodEnd' | 'lastChangeAt'>, clock: Date): Date {
  const second = Math.floor(clock.getTime() / 1000) * 1000;
  const since = currentPlanSince(s)?.getTime() ?? second;
  return new Date(Math.min(clock.getTime(), Math.max(second, since)));
}

/**
 * An immediate change at `now`: the new plan's terms; the same billing period goes on from
 * `now` inside the current period (`lastChangeAt`), another one anchors a new run of periods at
 * `now`. A trial keeps its period: the plan is swapped, nothing is billed.
 */
function switchedNow(s: Subscription, terms: Terms, overrides: Subscription['priceOverrides'], change: PlanChange, now: Date): Subscription {
  const swapped: Subscription = {
    ...s,
    planId: change.planId,
    billingPeriod: terms.billingPeriod,
    billingPeriodCount: terms.billingPeriodCount,
    priceOverrides: overrides,
    commitmentAmount: change.commitmentAmount ?? s.commitmentAmount,
    usageThresholds: change.usageThresholds ?? s.usageThresholds,
    pendingChange: null,
    updatedAt: now,
  };
  if (s.status === 'trialing') return swapped;
  const sameRun = terms.billingPeriod === s.billingPeriod && terms.billingPeriodCount === s.billingPeriodCount;
  return sameRun ? { ...swapped, lastChangeAt: now } : runFrom(swapped, now, now);
}

/** A change at the end of the current period: kept on the subscription (a new one replaces it). */
function withPending(
  s: Subscription,
  terms: Terms,
  billed: { prices: Price[]; overrides: Subscription['priceOverrides'] },
  change: PlanChange,
  changeId: string,
  now: Date,
): Subscription {
  const { idempotencyKey: _key, requestHash: _hash, ...request } = change;
  const pending: PendingChange = {
    changeId,
    request,
    planId: change.planId,
    billingPeriod: terms.billingPeriod,
    billingPeriodCount: terms.billingPeriodCount,
    priceIds: billed.prices.map((p) => p.id),
    priceOverrides: billed.overrides,
    commitmentAmount: change.commitmentAmount ?? s.commitmentAmount,
    usageThresholds: change.usageThresholds ?? s.usageThresholds,
    effectiveAt: s.currentPeriodEnd!,
  };
  return { ...s, pendingChange: pending, updatedAt: now };
}
