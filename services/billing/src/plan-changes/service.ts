import type { ChangeSubscriptionBody, SubscriptionResponse } from '@billstream/contracts';
import type { Db, Trx } from '@billstream/db';
import { IdempotencyConflictError, NotFoundError, ServiceUnavailableError, ValidationError } from '@billstream/errors';
import { newId } from '@billstream/ids';
import { failpoint } from '@billstream/runtime';
import type { EventContext } from '@billstream/outbox';
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
import { changeRequestOf, requestHash, type ChangeRecord } from './domain';
import type { ChangeInvoicer, PreparedChangeInvoice } from './invoice';
import type { ChangeStore } from './store';

type Ctx = EventContext & { requestId: string };

export interface PlanChangeDeps {
  db: Db;
  subscriptions: SubscriptionStore;
  plans: PlanStore;
  prices: PriceStore;
  changes: ChangeStore;
  invoices: InvoiceStore;
  invoicer: ChangeInvoicer;
  /** Invoices a subscription's ended periods first (the period job's catch-up). */
  catchUp: (subscriptionId: string, requestId: string) => Promise<unknown>;
  grants?: SubscriptionGrants;
  /**
   * Finalizes the subscription's drafts (as the period job would) before a change with
   * prorations: the credit is then split by what the credited invoice was paid (ADR 0056).
   */
  finalizeDrafts?: (subscriptionId: string, requestId: string) => Promise<void>;
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

/**
 * Plan changes (docs/api/plan-changes.md, ADR 0043). A change is prepared outside its transaction
 * (the old plan's usage read from the aggregator), then the swap (plan, prices, period), its
 * event, its SUBSCRIPTION_UPDATE invoice with its proration credits, the grants and the change
 * record bound to its idempotency key commit in one transaction under the subscription's row
 * lock, if the subscription did not change meanwhile (else it is prepared again). A preview runs
 * the same code and rolls the transaction back: nothing is stored, debited or published.
 */
export class PlanChangeService {
  constructor(private readonly deps: PlanChangeDeps) {}

  async change(ctx: Ctx, id: string, body: ChangeSubscriptionBody): Promise<ChangeResult> {
    const hash = requestHash(id, body);
    if (body.idempotency_key) {
      const earlier = await this.deps.changes.getByKey(this.deps.db, ctx, body.idempotency_key);
      if (earlier) return this.replay(earlier, hash);
    }
    try {
      const result = await this.run(ctx, id, body, hash, false);
      if ('replayed' in result) return result.replayed;
      // Crash point of the exactly-once proof: the change committed, the client not answered, the grants not credited.
      failpoint('plan-changes.after-commit');
      this.deps.published();
      await this.deps.grants?.settle(ctx, id, ctx.requestId);
      return result;
    } catch (err) {
      if (!(err instanceof KeyTaken)) throw err;
      return this.replay((await this.deps.changes.getByKey(this.deps.db, ctx, body.idempotency_key!))!, hash);
    }
  }

  /** The answer the change would give now, with nothing stored: the same code, its transaction rolled back. */
  async preview(ctx: Ctx, id: string, body: ChangeSubscriptionBody): Promise<ChangeResult & { effectiveAt: Date }> {
    try {
      await this.run(ctx, id, { ...body, idempotency_key: undefined }, requestHash(id, body), true);
    } catch (err) {
      if (err instanceof Preview) return { ...err.result, effectiveAt: err.at };
      throw err;
    }
    throw new Error('a preview always rolls back');
  }

  /** DELETE .../pending_change: the change waiting for the period end is dropped. */
  async cancelPending(ctx: Ctx, id: string): Promise<Subscription> {
    const saved = await this.deps.db.transaction(async (trx) => {
      const locked = await this.deps.subscriptions.getForUpdate(trx, ctx, id);
      if (!locked) throw subscriptionNotFound(id);
      if (!locked.pendingChange) throw new NotFoundError(`Subscription ${id} has no pending change`, { field: 'pending_change', subscription_id: id });
      const stored = await this.deps.subscriptions.save(trx, { ...locked, pendingChange: null, updatedAt: this.deps.clock() });
      await announce(trx, ctx, SUBSCRIPTION_EVENTS.updated, stored);
      return stored;
    });
    this.deps.published();
    return saved;
  }

  private async replay(earlier: ChangeRecord, hash: string): Promise<ChangeResult> {
    if (earlier.requestHash !== hash) {
      throw new IdempotencyConflictError('This idempotency_key was already used with another change', { field: 'idempotency_key', change_id: earlier.id });
    }
    // The subscription as the change left it (it may have moved on since), the invoice as it is now.
    const invoice = earlier.invoiceId ? ((await this.deps.invoices.getById(this.deps.db, earlier.invoiceId)) ?? null) : null;
    return { subscription: earlier.subscription, invoice };
  }

  private async run(ctx: Ctx, id: string, body: ChangeSubscriptionBody, hash: string, preview: boolean): Promise<ChangeResult | { replayed: ChangeResult }> {
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      // A concurrent call with the same key may have changed the subscription meanwhile: its answer is this one's.
      const earlier = attempt > 0 && body.idempotency_key ? await this.deps.changes.getByKey(this.deps.db, ctx, body.idempotency_key) : undefined;
      if (earlier) return { replayed: await this.replay(earlier, hash) };
      const current = await this.current(ctx, id);
      const now = changeInstant(current, this.deps.clock());
      if (stepsUntil(current, now).length > 0) continue;
      const plan = await this.checked(ctx, current, body);
      const changeId = newId('subscriptionChange');
      const billed = withOverrides(id, plan.terms.prices, (body.price_overrides ?? []).map((o) => ({
        priceId: o.price_id,
        amount: o.amount,
        tiers: o.tiers?.map((t) => ({ upTo: t.up_to, unitAmount: t.unit_amount, flatAmount: t.flat_amount ?? null })),
      })));
      const immediate = body.effective === 'immediately';
      const after = immediate ? switchedNow(current, plan.terms, billed.overrides, body, now) : withPending(current, plan.terms, billed, body, changeId, now);
      const prorate = body.proration_behavior === 'create_prorations';
      // A draft has nothing paid nor due yet: finalized first, its unused time lowers what it has due (a preview stores nothing: it takes a draft as unpaid).
      if (immediate && prorate && current.status === 'active' && !preview && attempt === 0) await this.deps.finalizeDrafts?.(id, ctx.requestId);
      const invoice: PreparedChangeInvoice | undefined =
        immediate && current.status === 'active'
          ? await this.deps.invoicer.prepare(current, after, await this.deps.prices.ofSubscription(this.deps.db, current, id), billed.prices, now, changeId, prorate, ctx.requestId)
          : undefined;
      const result = await this.deps.db.transaction(async (trx) => {
        const locked = await this.deps.subscriptions.getForUpdate(trx, ctx, id);
        if (!locked) throw subscriptionNotFound(id);
        if (locked.version !== current.version) return undefined;
        const shared = await this.deps.plans.getForShare(trx, ctx, plan.id);
        if (!shared || shared.status === 'archived') throw planArchived(plan.id);
        await this.deps.prices.insert(trx, billed.made);
        if (immediate) await this.deps.subscriptions.replacePrices(trx, id, billed.prices.map((p) => p.id));
        const saved = await this.deps.subscriptions.save(trx, after);
        await announce(trx, ctx, SUBSCRIPTION_EVENTS.updated, saved);
        const made = invoice ? await invoice.write(trx) : null;
        if (immediate) await this.deps.grants?.planChanged(trx, current, saved, now, prorate && current.status === 'active');
        const view = toSubscriptionView(saved);
        await this.record(trx, ctx, { changeId, hash, body, current, saved, view, invoice: made, now });
        const answer = { subscription: view, invoice: made };
        if (preview) throw new Preview(answer, now);
        // Crash point of the exactly-once proof (ADR 0017): everything written, nothing committed.
        failpoint('plan-changes.before-commit');
        return answer;
      });
      if (result) return result;
    }
    throw new ServiceUnavailableError(`Subscription ${id} kept changing; retry`);
  }

  /** The subscription with its ended periods invoiced, if it can change (active or trialing, not cancelling). */
  private async current(ctx: Ctx, id: string): Promise<Subscription> {
    let s = await this.deps.subscriptions.get(this.deps.db, ctx, id);
    if (!s) throw subscriptionNotFound(id);
    if (stepsUntil(s, this.deps.clock()).length > 0) {
      await this.deps.catchUp(id, ctx.requestId);
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

  /** The new plan's terms: its active prices in the subscription's currency, of the billing period asked (default: the current one, else the plan's only one). */
  private async checked(ctx: Ctx, s: Subscription, body: ChangeSubscriptionBody): Promise<{ id: string; terms: Terms }> {
    const plan = await this.deps.plans.get(this.deps.db, ctx, body.plan_id);
    if (!plan) throw planNotFound(body.plan_id, 'plan_id');
    if (plan.status === 'archived') throw planArchived(plan.id);
    const active = ((await this.deps.prices.ofPlans(this.deps.db, ctx, [plan.id])).get(plan.id) ?? []).filter((p) => p.status === 'active');
    const inCurrency = active.filter((p) => p.currency === s.currency);
    if (inCurrency.length === 0) {
      throw new ValidationError(`Plan ${plan.id} has no active price in ${s.currency}, the subscription's currency (it never changes)`, { field: 'plan_id', plan_id: plan.id });
    }
    const period = body.billing_period ?? (inCurrency.some((p) => p.billingPeriod === s.billingPeriod) ? s.billingPeriod : undefined);
    const terms = termsOf(plan.id, inCurrency, s.currency, period);
    if (plan.id === s.planId && terms.billingPeriod === s.billingPeriod && terms.billingPeriodCount === s.billingPeriodCount && !body.price_overrides) {
      throw new ValidationError(`The subscription already bills plan ${plan.id} ${terms.billingPeriod}: nothing to change`, { field: 'plan_id', plan_id: plan.id });
    }
    return { id: plan.id, terms };
  }

  private async record(
    trx: Trx,
    ctx: Ctx,
    c: { changeId: string; hash: string; body: ChangeSubscriptionBody; current: Subscription; saved: Subscription; view: SubscriptionResponse; invoice: Invoice | null; now: Date },
  ): Promise<void> {
    const inserted = await this.deps.changes.insert(trx, {
      id: c.changeId,
      tenantId: ctx.tenantId,
      environmentId: ctx.environmentId,
      subscriptionId: c.saved.id,
      idempotencyKey: c.body.idempotency_key ?? null,
      requestHash: c.hash,
      effective: c.body.effective,
      effectiveAt: c.body.effective === 'immediately' ? c.now : c.saved.pendingChange!.effectiveAt,
      fromPlanId: c.current.planId,
      toPlanId: c.body.plan_id,
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
function switchedNow(s: Subscription, terms: Terms, overrides: Subscription['priceOverrides'], body: ChangeSubscriptionBody, now: Date): Subscription {
  const swapped: Subscription = {
    ...s,
    planId: body.plan_id,
    billingPeriod: terms.billingPeriod,
    billingPeriodCount: terms.billingPeriodCount,
    priceOverrides: overrides,
    commitmentAmount: body.commitment_amount ?? s.commitmentAmount,
    usageThresholds: body.usage_thresholds?.map((t) => t.amount) ?? s.usageThresholds,
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
  body: ChangeSubscriptionBody,
  changeId: string,
  now: Date,
): Subscription {
  const pending: PendingChange = {
    changeId,
    request: changeRequestOf(body),
    planId: body.plan_id,
    billingPeriod: terms.billingPeriod,
    billingPeriodCount: terms.billingPeriodCount,
    priceIds: billed.prices.map((p) => p.id),
    priceOverrides: billed.overrides,
    commitmentAmount: body.commitment_amount ?? s.commitmentAmount,
    usageThresholds: body.usage_thresholds?.map((t) => t.amount) ?? s.usageThresholds,
    effectiveAt: s.currentPeriodEnd!,
  };
  return { ...s, pendingChange: pending, updatedAt: now };
}
