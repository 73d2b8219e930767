import { TOPICS } from '@billstream/bus';
import type { DomainEvent, Scope, UsageEventMessage, WebhookEventName } from '@billstream/contracts';
import { rowsOf, type Conn, type Knex, type Trx } from '@billstream/db';
import { newDomainEvent, outboxInsertMany, type EventContext } from '@billstream/outbox';
import { EXACT_ZERO, exact, toDecimalString } from '@billstream/money';
import type { Decimal } from 'decimal.js';
import type { QuotaHold, Reservation, ReservationStatus } from './domain';
import { reservationView } from './view';

interface ReservationRow {
  id: string;
  tenant_id: string;
  environment_id: string;
  customer_id: string;
  wallet_id: string | null;
  currency: string | null;
  status: ReservationStatus;
  credits_held: string | null;
  feature_id: string | null;
  entitlement: EntitlementColumn | string | null;
  quantity_held: string | null;
  quantity_committed: string | null;
  commit_event: UsageEventMessage | string | null;
  event_seen_at: Date | null;
  settled_at: Date | null;
  credits_committed: string | null;
  transaction_id: string | null;
  allow_overage: boolean;
  expires_at: Date;
  idempotency_key: string;
  request_hash: string;
  metadata: Record<string, string> | string;
  created_at: Date;
  updated_at: Date;
  ended_at: Date | null;
}

/** `entitlement` of a quantity hold, as stored. */
interface EntitlementColumn {
  feature_lookup_key: string;
  external_customer_id: string;
  meter_id: string;
  entitlement_ids: string[];
}

function quotaOf(r: ReservationRow): QuotaHold | null {
  if (r.feature_id === null || r.quantity_held === null || r.entitlement === null) return null;
  const e = typeof r.entitlement === 'string' ? (JSON.parse(r.entitlement) as EntitlementColumn) : r.entitlement;
  return {
    featureId: r.feature_id,
    featureLookupKey: e.feature_lookup_key,
    externalCustomerId: e.external_customer_id,
    meterId: e.meter_id,
    entitlementIds: e.entitlement_ids,
    quantityHeld: exact(r.quantity_held),
    quantityCommitted: r.quantity_committed === null ? null : exact(r.quantity_committed),
  };
}

function fromRow(r: ReservationRow): Reservation {
  return {
    id: r.id,
    tenantId: r.tenant_id,
    environmentId: r.environment_id,
    customerId: r.customer_id,
    walletId: r.wallet_id,
    currency: r.currency,
    status: r.status,
    creditsHeld: r.credits_held === null ? null : exact(r.credits_held),
    creditsCommitted: r.credits_committed === null ? null : exact(r.credits_committed),
    quota: quotaOf(r),
    commitEvent: typeof r.commit_event === 'string' ? (JSON.parse(r.commit_event) as UsageEventMessage) : r.commit_event,
    eventSeenAt: r.event_seen_at && new Date(r.event_seen_at),
    settledAt: r.settled_at && new Date(r.settled_at),
    transactionId: r.transaction_id,
    allowOverage: r.allow_overage,
    expiresAt: new Date(r.expires_at),
    idempotencyKey: r.idempotency_key,
    requestHash: r.request_hash,
    metadata: typeof r.metadata === 'string' ? (JSON.parse(r.metadata) as Record<string, string>) : r.metadata,
    createdAt: new Date(r.created_at),
    updatedAt: new Date(r.updated_at),
    endedAt: r.ended_at && new Date(r.ended_at),
  };
}

/**
 * The holds that count at `now`: live ones (held, not past `expires_at`), and those committed by
 * a usage event not counted yet (ADR 0070): so what is available never jumps up in between.
 */
function countingAt(q: Knex.QueryBuilder, now: Date): Knex.QueryBuilder {
  return q
    .where((h) => h.where({ status: 'held' }).where('expires_at', '>', now))
    .orWhere((c) => c.where({ status: 'committed' }).whereNotNull('commit_event').whereNull('settled_at'));
}

/** The end of a hold as stored: who ended it, what it debited. */
export interface ReservationEnd {
  status: Exclude<ReservationStatus, 'held'>;
  creditsCommitted: Decimal | null;
  transactionId: string | null;
  /** A quantity commit: what it counted as usage. */
  quantityCommitted?: Decimal;
  /** A commit by usage event: the event sent (the hold counts until it is counted). */
  commitEvent?: UsageEventMessage;
}

/** `wallet.reservations`. */
export class ReservationStore {
  async insert(trx: Trx, r: Reservation): Promise<void> {
    await trx('reservations').insert({
      id: r.id,
      tenant_id: r.tenantId,
      environment_id: r.environmentId,
      customer_id: r.customerId,
      wallet_id: r.walletId,
      currency: r.currency,
      status: r.status,
      credits_held: r.creditsHeld && toDecimalString(r.creditsHeld),
      credits_committed: null,
      feature_id: r.quota?.featureId ?? null,
      entitlement: r.quota
        ? JSON.stringify({ feature_lookup_key: r.quota.featureLookupKey, external_customer_id: r.quota.externalCustomerId, meter_id: r.quota.meterId, entitlement_ids: r.quota.entitlementIds } satisfies EntitlementColumn)
        : null,
      quantity_held: r.quota ? toDecimalString(r.quota.quantityHeld) : null,
      quantity_committed: null,
      transaction_id: null,
      allow_overage: r.allowOverage,
      expires_at: r.expiresAt,
      idempotency_key: r.idempotencyKey,
      request_hash: r.requestHash,
      metadata: JSON.stringify(r.metadata),
      created_at: r.createdAt,
      updated_at: r.updatedAt,
      ended_at: null,
    });
  }

  async byId(conn: Conn, scope: Scope, id: string): Promise<Reservation | undefined> {
    const row = await conn('reservations').where({ id, tenant_id: scope.tenantId, environment_id: scope.environmentId }).first<ReservationRow | undefined>();
    return row && fromRow(row);
  }

  /** The reservation, row-locked until the transaction ends (a commit, a release and the job take it in turn). */
  async lockById(trx: Trx, scope: Scope, id: string): Promise<Reservation | undefined> {
    const row = await trx('reservations').where({ id, tenant_id: scope.tenantId, environment_id: scope.environmentId }).forUpdate().first<ReservationRow | undefined>();
    return row && fromRow(row);
  }

  /** The customer's oldest active PRE_PAID wallet of the currency (the one a hold takes from). */
  async activePrepaidWallet(conn: Conn, scope: Scope, customerId: string, currency: string): Promise<string | undefined> {
    const row = await conn('wallets')
      .where({ tenant_id: scope.tenantId, environment_id: scope.environmentId, customer_id: customerId, currency, wallet_type: 'PRE_PAID', wallet_status: 'active' })
      .orderBy([{ column: 'created_at' }, { column: 'id' }])
      .first<{ id: string } | undefined>('id');
    return row?.id;
  }

  /**
   * Writes the events of reservations that ended without a wallet change (a release, the
   * expiry job) to the outbox, keyed by their wallet as the wallet's other events are.
   */
  async announce(trx: Trx, ctx: EventContext | null, ended: Reservation[], type: WebhookEventName, now: Date): Promise<DomainEvent[]> {
    const items = ended.map((r) => ({
      key: r.walletId ?? r.customerId,
      event: newDomainEvent(type, ctx ?? { tenantId: r.tenantId, environmentId: r.environmentId, actor: 'system' }, { reservation: reservationView(r, now) }),
    }));
    if (items.length > 0) await outboxInsertMany(trx, TOPICS.walletEvents, items);
    return items.map((i) => i.event);
  }

  async byKey(conn: Conn, scope: Scope, key: string): Promise<Reservation | undefined> {
    const row = await conn('reservations').where({ idempotency_key: key, tenant_id: scope.tenantId, environment_id: scope.environmentId }).first<ReservationRow | undefined>();
    return row && fromRow(row);
  }

  /** Credits held at `now` by the wallet's live reservations (held, not past `expires_at`), but `except`. */
  async heldCredits(conn: Conn, walletId: string, now: Date, except?: string): Promise<Decimal> {
    const row = await conn('reservations')
      .where({ wallet_id: walletId })
      .where((q) => countingAt(q, now))
      .modify((q) => {
        if (except) q.whereNot('id', except);
      })
      .first<{ held: string | null }>(conn.raw('sum(credits_held)::text AS held'));
    return row?.held ? exact(row.held) : EXACT_ZERO;
  }

  /** Quantity held at `now` by the live holds of a customer's feature (held, not past `expires_at`). */
  async heldQuantity(conn: Conn, scope: Scope, customerId: string, featureId: string, now: Date): Promise<Decimal> {
    const row = await conn('reservations')
      .where({ tenant_id: scope.tenantId, environment_id: scope.environmentId, customer_id: customerId, feature_id: featureId })
      .where((q) => countingAt(q, now))
      .first<{ held: string | null }>(conn.raw("sum(CASE WHEN status = 'held' THEN quantity_held ELSE coalesce(quantity_committed, quantity_held) END)::text AS held"));
    return row?.held ? exact(row.held) : EXACT_ZERO;
  }

  /** `heldCredits` of several wallets in one statement (wallet id -> credits; 0 when none). */
  async heldByWallet(conn: Conn, walletIds: string[], now: Date): Promise<Map<string, Decimal>> {
    const out = new Map(walletIds.map((id) => [id, EXACT_ZERO]));
    if (walletIds.length === 0) return out;
    const rows = await conn('reservations')
      .whereIn('wallet_id', walletIds)
      .where((q) => countingAt(q, now))
      .groupBy('wallet_id')
      .select<Array<{ wallet_id: string; held: string }>>('wallet_id', conn.raw('sum(credits_held)::text AS held'));
    for (const r of rows) out.set(r.wallet_id, exact(r.held));
    return out;
  }

  async end(trx: Trx, id: string, end: ReservationEnd, now: Date): Promise<void> {
    await trx('reservations')
      .where({ id })
      .update({
        status: end.status,
        credits_committed: end.creditsCommitted && toDecimalString(end.creditsCommitted),
        transaction_id: end.transactionId,
        ...(end.quantityCommitted ? { quantity_committed: toDecimalString(end.quantityCommitted) } : {}),
        ...(end.commitEvent ? { commit_event: JSON.stringify(end.commitEvent) } : {}),
        updated_at: now,
        ended_at: now,
      });
  }

  /**
   * Marks up to `limit` holds past `expires_at` expired, in one statement; rows a commit or a
   * release has locked are skipped (SKIP LOCKED: that call decides, the next round sees the rest).
   */
  async expireDue(trx: Trx, now: Date, limit: number): Promise<Reservation[]> {
    const rows = rowsOf<ReservationRow>(
      await trx.raw(
        `UPDATE reservations r SET status = 'expired', updated_at = ?, ended_at = ?
          WHERE r.id IN (SELECT id FROM reservations WHERE status = 'held' AND expires_at <= ? ORDER BY expires_at LIMIT ? FOR UPDATE SKIP LOCKED)
          RETURNING r.*`,
        [now, now, now, limit],
      ),
    );
    return rows.map(fromRow);
  }

  /** Newest first; `status` as a client sees it at `now` (held: not past expires_at; expired: written so or past it). */
  async list(
    conn: Conn,
    scope: Scope,
    filter: { customerId?: string; status?: ReservationStatus },
    page: { limit: number; offset: number },
    now: Date,
  ): Promise<{ items: Reservation[]; total: number }> {
    const base = conn('reservations')
      .where({ tenant_id: scope.tenantId, environment_id: scope.environmentId })
      .modify((q) => {
        if (filter.customerId) q.where({ customer_id: filter.customerId });
        if (filter.status === 'held') q.where({ status: 'held' }).where('expires_at', '>', now);
        else if (filter.status === 'expired') q.where((w) => w.where({ status: 'expired' }).orWhere((h) => h.where({ status: 'held' }).where('expires_at', '<=', now)));
        else if (filter.status) q.where({ status: filter.status });
      });
    const [rows, count] = await Promise.all([
      base.clone().orderBy('id', 'desc').limit(page.limit).offset(page.offset).select<ReservationRow[]>('*'),
      base.clone().count<{ count: string | number }[]>({ count: '*' }),
    ]);
    return { items: rows.map(fromRow), total: Number(count[0]?.count ?? 0) };
  }
}
