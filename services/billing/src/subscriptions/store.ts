import type { Scope } from '@billstream/contracts';
import type { Conn, Db, Trx } from '@billstream/db';
import type { PendingChange, Subscription, SubscriptionListQuery } from './domain';
import { updateMany } from '../shared/update-many';

interface SubscriptionRow {
  id: string;
  tenant_id: string;
  environment_id: string;
  customer_id: string;
  invoicing_customer_id: string | null;
  plan_id: string;
  currency: string;
  billing_period: Subscription['billingPeriod'];
  billing_period_count: number;
  billing_cycle: Subscription['billingCycle'];
  timezone: string;
  status: Subscription['status'];
  start_date: Date | null;
  billing_anchor: Date | null;
  current_period_start: Date | null;
  current_period_end: Date | null;
  trial_period_days: number | null;
  trial_end: Date | null;
  payment_terms_days: number;
  cancel_at_period_end: boolean;
  cancelled_at: Date | null;
  paused_at: Date | null;
  commitment_amount: number | null;
  price_overrides: Array<{ price_id: string; override_price_id: string; amount: string | null; tiers: Array<{ up_to: string | null; unit_amount: string; flat_amount: string | null }> | null }>;
  last_change_at: Date | null;
  usage_thresholds: number[] | null;
  pending_change: StoredPendingChange | null;
  metadata: Record<string, string>;
  version: number;
  created_at: Date;
  updated_at: Date;
}

/** A pending change as stored (`pending_change` jsonb): the domain's, with its instant as an ISO string. */
type StoredPendingChange = Omit<PendingChange, 'effectiveAt'> & { effectiveAt: string };

function pendingOf(p: StoredPendingChange | null): PendingChange | null {
  return p && { ...p, effectiveAt: new Date(p.effectiveAt) };
}

function fromRow(r: SubscriptionRow): Subscription {
  return {
    id: r.id,
    tenantId: r.tenant_id,
    environmentId: r.environment_id,
    customerId: r.customer_id,
    invoicingCustomerId: r.invoicing_customer_id ?? null,
    planId: r.plan_id,
    currency: r.currency,
    billingPeriod: r.billing_period,
    billingPeriodCount: r.billing_period_count,
    billingCycle: r.billing_cycle,
    timezone: r.timezone,
    status: r.status,
    startDate: r.start_date,
    billingAnchor: r.billing_anchor,
    currentPeriodStart: r.current_period_start,
    currentPeriodEnd: r.current_period_end,
    trialPeriodDays: r.trial_period_days,
    trialEnd: r.trial_end,
    paymentTermsDays: r.payment_terms_days,
    cancelAtPeriodEnd: r.cancel_at_period_end,
    cancelledAt: r.cancelled_at,
    pausedAt: r.paused_at,
    commitmentAmount: r.commitment_amount === null ? null : Number(r.commitment_amount),
    priceOverrides: (r.price_overrides ?? []).map((o) => ({
      priceId: o.price_id,
      overridePriceId: o.override_price_id,
      amount: o.amount,
      tiers: o.tiers && o.tiers.map((t) => ({ upTo: t.up_to, unitAmount: t.unit_amount, flatAmount: t.flat_amount })),
    })),
    lastChangeAt: r.last_change_at,
    usageThresholds: (r.usage_thresholds ?? []).map(Number),
    pendingChange: pendingOf(r.pending_change),
    metadata: r.metadata,
    version: r.version,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/** An override as stored and shown (snake case, as the API writes it). */
export function overrideView(o: Subscription['priceOverrides'][number]) {
  return {
    price_id: o.priceId,
    override_price_id: o.overridePriceId,
    amount: o.amount,
    tiers: o.tiers && o.tiers.map((t) => ({ up_to: t.upTo, unit_amount: t.unitAmount, flat_amount: t.flatAmount })),
  };
}

/** The columns a change may write (everything but the identity and the creation time). */
function changeRow(s: Subscription) {
  return {
    status: s.status,
    start_date: s.startDate,
    billing_anchor: s.billingAnchor,
    current_period_start: s.currentPeriodStart,
    current_period_end: s.currentPeriodEnd,
    trial_end: s.trialEnd,
    cancel_at_period_end: s.cancelAtPeriodEnd,
    cancelled_at: s.cancelledAt,
    paused_at: s.pausedAt,
    plan_id: s.planId,
    billing_period: s.billingPeriod,
    billing_period_count: s.billingPeriodCount,
    commitment_amount: s.commitmentAmount,
    price_overrides: JSON.stringify(s.priceOverrides.map(overrideView)),
    last_change_at: s.lastChangeAt,
    usage_thresholds: JSON.stringify(s.usageThresholds),
    pending_change: s.pendingChange && JSON.stringify({ ...s.pendingChange, effectiveAt: s.pendingChange.effectiveAt.toISOString() }),
    updated_at: s.updatedAt,
  };
}

const scoped = (conn: Conn, scope: Scope) =>
  conn<SubscriptionRow>('subscriptions').where({ tenant_id: scope.tenantId, environment_id: scope.environmentId });

export class SubscriptionStore {
  async insert(trx: Trx, s: Subscription, priceIds: string[]): Promise<void> {
    await trx('subscriptions').insert({
      id: s.id,
      tenant_id: s.tenantId,
      environment_id: s.environmentId,
      customer_id: s.customerId,
      invoicing_customer_id: s.invoicingCustomerId,
      currency: s.currency,
      billing_cycle: s.billingCycle,
      timezone: s.timezone,
      trial_period_days: s.trialPeriodDays,
      payment_terms_days: s.paymentTermsDays,
      metadata: JSON.stringify(s.metadata),
      version: s.version,
      created_at: s.createdAt,
      ...changeRow(s),
    });
    if (priceIds.length > 0) await trx('subscription_prices').insert(priceIds.map((price_id) => ({ subscription_id: s.id, price_id })));
  }

  async get(conn: Conn, scope: Scope, id: string): Promise<Subscription | undefined> {
    const row = await scoped(conn, scope).where({ id }).first();
    return row && fromRow(row);
  }

  /** Any tenant's subscription by id (the period job works across tenants). */
  async getById(conn: Conn, id: string): Promise<Subscription | undefined> {
    const row = await conn<SubscriptionRow>('subscriptions').where({ id }).first();
    return row && fromRow(row);
  }

  /** Any tenant's subscriptions by id (the period job's batch), in no particular order. */
  async getByIds(conn: Conn, ids: string[]): Promise<Subscription[]> {
    if (ids.length === 0) return [];
    const rows = await conn<SubscriptionRow>('subscriptions').whereIn('id', ids);
    return rows.map((r) => fromRow(r as SubscriptionRow));
  }

  /** Subscriptions locked until the transaction ends, in id order (one statement; concurrent batches lock in the same order). */
  async lockMany(trx: Trx, ids: string[]): Promise<Subscription[]> {
    if (ids.length === 0) return [];
    const rows = await trx<SubscriptionRow>('subscriptions').whereIn('id', ids).orderBy('id').forUpdate();
    return rows.map((r) => fromRow(r as SubscriptionRow));
  }

  /**
   * Claims up to `limit` subscriptions whose current period ended by `now` for `leaseMs`: SKIP
   * LOCKED and the lease let replicas take different ones; a claim a crash left expires. With
   * `scope`, only that tenant's and environment's (the cron endpoint); without, every one.
   */
  async claimDue(db: Db, now: Date, leaseMs: number, limit: number, scope?: Scope): Promise<string[]> {
    const result = await db.raw<{ rows: Array<{ id: string }> }>(
      `UPDATE subscriptions SET work_lease_until = ? WHERE id IN (
         SELECT id FROM subscriptions
         WHERE status IN ('trialing', 'active') AND current_period_end <= ? AND (work_lease_until IS NULL OR work_lease_until <= ?)
           ${scope ? 'AND tenant_id = ? AND environment_id = ?' : ''}
         ORDER BY current_period_end, id LIMIT ? FOR UPDATE SKIP LOCKED)
       RETURNING id`,
      [new Date(now.getTime() + leaseMs), now, now, ...(scope ? [scope.tenantId, scope.environmentId] : []), limit],
    );
    return result.rows.map((r) => r.id);
  }

  /** The subscription, locked until the transaction ends (a change, or a period step). */
  async getForUpdate(trx: Trx, scope: Scope, id: string): Promise<Subscription | undefined> {
    const row = await scoped(trx, scope).where({ id }).forUpdate().first();
    return row && fromRow(row);
  }

  async list(conn: Conn, scope: Scope, q: SubscriptionListQuery): Promise<{ items: Subscription[]; total: number }> {
    const filtered = () => {
      const b = scoped(conn, scope);
      if (q.customerId) b.where({ customer_id: q.customerId });
      if (q.planId) b.where({ plan_id: q.planId });
      if (q.status) b.where({ status: q.status });
      return b;
    };
    const rows = await filtered().orderBy([{ column: 'created_at' }, { column: 'id' }]).limit(q.limit).offset(q.offset);
    const count = await filtered().count<{ n: string }[]>({ n: '*' });
    return { items: rows.map(fromRow), total: Number(count[0].n) };
  }

  /** The running (active and trialing) subscriptions of several customers of one scope, by id (a customer's usage, ADR 0047). */
  async runningOf(conn: Conn, scope: Scope, customerIds: string[]): Promise<Subscription[]> {
    if (customerIds.length === 0) return [];
    const rows = await scoped(conn, scope).whereIn('customer_id', customerIds).whereIn('status', ['active', 'trialing']).orderBy('id');
    return rows.map(fromRow);
  }

  /** The running (active and trialing) subscriptions several customers of one scope pay (unbilled usage, ADR 0024 and 0047). */
  async runningPaidBy(conn: Conn, scope: Scope, payerIds: string[]): Promise<Subscription[]> {
    if (payerIds.length === 0) return [];
    // Not coalesce(invoicing_customer_id, customer_id): no index has that expression. Each side
    // has its index (subscriptions_invoicing_customer, subscriptions_running_customer).
    const rows = await scoped(conn, scope)
      .where((q) => q.whereRaw('invoicing_customer_id = ANY(?::text[])', [payerIds]).orWhere((own) => own.whereNull('invoicing_customer_id').whereRaw('customer_id = ANY(?::text[])', [payerIds])))
      .whereIn('status', ['active', 'trialing'])
      .orderBy('id');
    return rows.map(fromRow);
  }

  /** Subscriptions not cancelled that a customer pays for another (the deletion rule, ADR 0047): the first `limit` ids by id, and how many. */
  async liveThatPays(conn: Conn, scope: Scope, payerId: string, limit: number): Promise<{ ids: string[]; count: number }> {
    const q = () => scoped(conn, scope).where({ invoicing_customer_id: payerId }).whereNot({ status: 'cancelled' });
    const [ids, [{ count }]] = await Promise.all([q().orderBy('id').limit(limit).pluck('id'), q().count<Array<{ count: string | number }>>('* as count')]);
    return { ids: ids as string[], count: Number(count) };
  }

  /** Subscriptions not cancelled that a deleted customer paid for others, locked: their customers pay from now on (ADR 0047). */
  async livePaidByForUpdate(trx: Trx, scope: Scope, payerId: string): Promise<Subscription[]> {
    const rows = await scoped(trx, scope).where({ invoicing_customer_id: payerId }).whereNot({ status: 'cancelled' }).orderBy('id').forUpdate();
    return rows.map(fromRow);
  }

  /** Its customer pays the subscription from now on (its payer was deleted, ADR 0047). */
  async dropPayer(trx: Trx, s: Subscription, at: Date): Promise<Subscription> {
    const rows = await trx('subscriptions')
      .where({ id: s.id })
      .update({ invoicing_customer_id: null, updated_at: at, version: trx.raw('version + 1') })
      .returning('*');
    return fromRow(rows[0] as SubscriptionRow);
  }

  /** A customer's subscriptions that are not cancelled, locked (the customer is being deleted). */
  /** The customer's subscriptions not cancelled yet, without locks (read before a transaction). */
  async liveOfCustomer(conn: Conn, scope: Scope, customerId: string): Promise<Subscription[]> {
    const rows = await scoped(conn, scope).where({ customer_id: customerId }).whereNot({ status: 'cancelled' }).orderBy('id');
    return rows.map(fromRow);
  }

  async liveOfCustomerForUpdate(trx: Trx, scope: Scope, customerId: string): Promise<Subscription[]> {
    const rows = await scoped(trx, scope).where({ customer_id: customerId }).whereNot({ status: 'cancelled' }).orderBy('id').forUpdate();
    return rows.map(fromRow);
  }

  async save(trx: Trx, s: Subscription): Promise<Subscription> {
    const rows = await trx('subscriptions')
      .where({ id: s.id })
      .update({ ...changeRow(s), work_lease_until: null, version: trx.raw('version + 1') })
      .returning('*');
    return fromRow(rows[0] as SubscriptionRow);
  }

  /** Saves subscriptions (a chunk of the period job) in one statement, as `save` saves one; answers them in the order given. */
  async saveMany(trx: Trx, subscriptions: Subscription[]): Promise<Subscription[]> {
    const records = subscriptions.map((s) => {
      const row = changeRow(s);
      const json = (text: string | null | undefined) => (typeof text === 'string' ? (JSON.parse(text) as unknown) : null);
      return { id: s.id, ...row, price_overrides: json(row.price_overrides), usage_thresholds: json(row.usage_thresholds), pending_change: json(row.pending_change) };
    });
    const byId = new Map((await updateMany<SubscriptionRow>(trx, 'subscriptions', records, ['work_lease_until = NULL', 'version = t.version + 1'])).map((r) => [r.id, r]));
    return subscriptions.map((s) => fromRow(byId.get(s.id)!));
  }

  /** The subscription bills `priceIds` from now on (a plan change): its earlier prices stay on the invoices that billed them. */
  async replacePrices(trx: Trx, id: string, priceIds: string[]): Promise<void> {
    await trx('subscription_prices').where({ subscription_id: id }).delete();
    if (priceIds.length > 0) await trx('subscription_prices').insert(priceIds.map((price_id) => ({ subscription_id: id, price_id })));
  }

  /** Active subscriptions with usage thresholds (of these customers, when given), for the threshold checks. */
  async withThresholds(conn: Conn, scope?: Scope, customerIds?: string[]): Promise<string[]> {
    const q = conn<SubscriptionRow>('subscriptions').whereRaw(`usage_thresholds <> '[]'::jsonb`).where({ status: 'active' });
    if (scope) q.where({ tenant_id: scope.tenantId, environment_id: scope.environmentId });
    if (customerIds) q.whereIn('customer_id', customerIds);
    return (await q.orderBy('id').select('id')).map((r) => r.id);
  }

  /** The ids of the prices the subscription bills. */
  async priceIds(conn: Conn, id: string): Promise<string[]> {
    const rows = await conn('subscription_prices').where({ subscription_id: id }).select('price_id').orderBy('price_id');
    return rows.map((r: { price_id: string }) => r.price_id);
  }

  /**
   * One subscription whose current period ended by `now`, locked; SKIP LOCKED lets replicas
   * share the due ones (a subscription another replica or a request holds is left to them).
   */
  async nextDue(trx: Trx, now: Date): Promise<Subscription | undefined> {
    const row = await trx<SubscriptionRow>('subscriptions')
      .whereIn('status', ['trialing', 'active'])
      .where('current_period_end', '<=', now)
      .orderBy([{ column: 'current_period_end' }, { column: 'id' }])
      .forUpdate()
      .skipLocked()
      .first();
    return row && fromRow(row);
  }

  /**
   * Active subscriptions renewing within the notice window that have no notice for their
   * current period end yet, locked (SKIP LOCKED).
   */
  async renewalsDue(trx: Trx, now: Date, noticeMs: number, limit: number, scope?: Scope): Promise<Subscription[]> {
    const q = trx<SubscriptionRow>('subscriptions as s');
    if (scope) q.where('s.tenant_id', scope.tenantId).where('s.environment_id', scope.environmentId);
    const rows = await q
      .select('s.*')
      .where('s.status', 'active')
      .where('s.cancel_at_period_end', false)
      .where('s.current_period_end', '>', now)
      .where('s.current_period_end', '<=', new Date(now.getTime() + noticeMs))
      .whereNotExists((q) =>
        q.select(trx.raw('1')).from('renewal_notices as n').whereRaw('n.subscription_id = s.id AND n.period_end = s.current_period_end'),
      )
      .orderBy('s.id')
      .limit(limit)
      .forUpdate('s')
      .skipLocked();
    return rows.map(fromRow);
  }

  /** Records the notice of one period end; false when it was recorded already (by anyone). */
  async recordRenewalNotice(trx: Trx, subscriptionId: string, periodEnd: Date, eventId: string, at: Date): Promise<boolean> {
    const rows = await trx('renewal_notices')
      .insert({ subscription_id: subscriptionId, period_end: periodEnd, event_id: eventId, created_at: at })
      .onConflict(['subscription_id', 'period_end'])
      .ignore()
      .returning('subscription_id');
    return rows.length === 1;
  }
}
