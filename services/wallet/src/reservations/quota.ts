import { createHash } from 'node:crypto';
import type { Scope, UsageEventInput, UsageEventMessage } from '@billstream/contracts';
import { TOPICS, messageKey, toMessage } from '@billstream/bus';
import type { Db, Trx } from '@billstream/db';
import { IdempotencyConflictError, InsufficientQuotaError, NotFoundError, PG_UNIQUE_VIOLATION, ValidationError, pgErrorCode } from '@billstream/errors';
import { newId } from '@billstream/ids';
import { EXACT_ZERO, exact, toDecimalString } from '@billstream/money';
import type { EventContext } from '@billstream/outbox';
import { failpoint } from '@billstream/runtime';
import type { Decimal } from 'decimal.js';
import { statusAt, type Reservation } from './domain';
import type { ReservationStore } from './store';
import type { QuotaUpstreams } from './upstreams';

/** A hold of a METERED hard-limit entitlement, mapped from the wire (the customer resolved). */
export interface QuotaRequest {
  customerId: string;
  featureId: string;
  quantity: Decimal;
  expiresInSeconds: number;
  idempotencyKey: string;
  metadata: Record<string, string>;
}

type Ctx = EventContext & { requestId: string };

/** The hold of `POST /v1/reservations` with `feature_id` and `quantity` (the contract checked both are there). */
export function quotaRequestOf(
  customerId: string,
  body: { feature_id?: string; quantity?: string; expires_in: number; idempotency_key: string; metadata?: Record<string, string> },
): QuotaRequest {
  return { customerId, featureId: body.feature_id!, quantity: exact(body.quantity!), expiresInSeconds: body.expires_in, idempotencyKey: body.idempotency_key, metadata: body.metadata ?? {} };
}

/** The outbox row of a usage event on usage-events, as the gateway would produce it: the aggregator's normal path (ADR 0070). */
export async function sendUsageEvent(trx: Trx, m: UsageEventMessage): Promise<void> {
  const id = newId('event');
  await trx('outbox').insert({ id, topic: TOPICS.usageEvents, message_key: messageKey(m), value: JSON.stringify(m), headers: JSON.stringify({ 'message-id': id }) });
}

/** The usage event of a commit by event: its own fields, `event_id` the reservation's id (a retry counts it once). */
export function commitEventOf(r: Reservation, event: UsageEventInput, now: Date): UsageEventMessage {
  if (event.event_id !== undefined && event.event_id !== r.id) {
    throw new ValidationError('event.event_id must be the reservation id (or left out)', { field: 'event.event_id', reservation_id: r.id });
  }
  return toMessage({ ...event, event_id: r.id }, { tenantId: r.tenantId, environmentId: r.environmentId }, now.toISOString());
}

/** JSON with object keys sorted at every depth: jsonb keeps its own key order. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

/** The same commit by event again: same event fields (the received time aside). */
export function sameEvent(a: UsageEventMessage, b: UsageEventMessage): boolean {
  return canonical({ ...a, received_at: null }) === canonical({ ...b, received_at: null });
}

/**
 * Holds of METERED hard-limit entitlements (docs/api/reservations.md, ADR 0070), in the wallet's
 * reservations table beside holds of credits. The check's limit and usage come from the
 * entitlements service before the transaction; the hold is made under a transaction-scoped
 * advisory lock of the customer and feature, so holds of one feature are serialized and
 * floor(R / x) of N parallel holds of x succeed.
 */
export class QuotaReservations {
  constructor(
    private readonly db: Db,
    private readonly store: ReservationStore,
    private readonly upstreams: QuotaUpstreams,
    /** The id of the customer of an external id (404 when none). */
    private readonly customerOfExternal: (ctx: Ctx, externalId: string) => Promise<string>,
    private readonly clock: () => Date,
    private readonly published: () => void,
  ) {}

  async create(ctx: Ctx, request: QuotaRequest): Promise<Reservation> {
    const hash = createHash('sha256')
      .update(JSON.stringify({ customer_id: request.customerId, feature_id: request.featureId, quantity: toDecimalString(request.quantity), expires_in: request.expiresInSeconds, metadata: request.metadata }))
      .digest('hex');
    const replay = (earlier: Reservation) => {
      if (earlier.requestHash !== hash) throw new IdempotencyConflictError('This idempotency_key was already used with another reservation', { field: 'idempotency_key', reservation_id: earlier.id });
      return earlier;
    };
    const earlier = await this.store.byKey(this.db, ctx, request.idempotencyKey);
    if (earlier) return replay(earlier);
    const q = await this.upstreams.quota(ctx, request.customerId, request.featureId, ctx.requestId);
    if (q.type !== 'METERED' || !q.meter_id) throw new ValidationError('Only a METERED feature can be held', { field: 'feature_id', feature_id: request.featureId, type: q.type });
    if (q.is_enabled && (q.limit === null || q.is_soft_limit)) {
      throw new ValidationError("The customer's entitlement to this feature has no hard limit: there is nothing to hold", { field: 'feature_id', feature_id: request.featureId });
    }
    // Not granted (or only disabled grants): the check's limit 0, nothing available.
    const remaining = q.is_enabled ? exact(q.limit!).minus(q.usage ?? '0') : EXACT_ZERO;
    try {
      const created = await this.db.transaction(async (trx) => {
        await trx.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 0))', [`reservation-quota|${ctx.tenantId}|${ctx.environmentId}|${request.customerId}|${request.featureId}`]);
        const first = await this.store.byKey(trx, ctx, request.idempotencyKey);
        if (first) return replay(first);
        const now = this.clock();
        const held = await this.store.heldQuantity(trx, ctx, request.customerId, request.featureId, now);
        const left = remaining.minus(held);
        const available = left.isNegative() ? EXACT_ZERO : left;
        if (request.quantity.greaterThan(available)) {
          throw new InsufficientQuotaError('Not enough of the entitlement available for this reservation', {
            field: 'quantity',
            available: toDecimalString(available),
            requested_quantity: toDecimalString(request.quantity),
            feature_id: request.featureId,
          });
        }
        const r: Reservation = {
          id: newId('reservation'),
          tenantId: ctx.tenantId,
          environmentId: ctx.environmentId,
          customerId: request.customerId,
          walletId: null,
          currency: null,
          status: 'held',
          creditsHeld: null,
          creditsCommitted: null,
          quota: { featureId: q.feature_id, featureLookupKey: q.feature_lookup_key, externalCustomerId: q.external_customer_id, meterId: q.meter_id!, entitlementIds: q.entitlement_ids, quantityHeld: request.quantity, quantityCommitted: null },
          commitEvent: null,
          eventSeenAt: null,
          settledAt: null,
          transactionId: null,
          allowOverage: false,
          expiresAt: new Date(now.getTime() + request.expiresInSeconds * 1000),
          idempotencyKey: request.idempotencyKey,
          requestHash: hash,
          metadata: request.metadata,
          createdAt: now,
          updatedAt: now,
          endedAt: null,
        };
        await this.store.insert(trx, r);
        await this.store.announce(trx, ctx, [r], 'reservation.created', now);
        failpoint('reservations.quota-create.before-commit');
        return r;
      });
      failpoint('reservations.quota-create.after-commit');
      this.published();
      return created;
    } catch (err) {
      if (pgErrorCode(err) !== PG_UNIQUE_VIOLATION) throw err;
      const winner = await this.store.byKey(this.db, ctx, request.idempotencyKey);
      if (!winner) throw err;
      return replay(winner);
    }
  }

  /**
   * A commit by `quantity`: one usage event of the entitlement's meter worth the quantity
   * (`event_id` = the reservation id), sent through the outbox to usage-events in the commit's
   * transaction; the committed quantity keeps counting until the check counts the event
   * (`UsageSettlement`), the rest is released now. A commit of 0 sends nothing.
   */
  async commitQuantity(ctx: Ctx, id: string, quantity: Decimal): Promise<Reservation> {
    const found = await this.quotaHold(ctx, id);
    if (found.status === 'committed') return this.sameQuantity(found, quantity);
    if (quantity.greaterThan(found.quota!.quantityHeld)) {
      throw new ValidationError('The commit is larger than the quantity held', { field: 'quantity', quantity_held: toDecimalString(found.quota!.quantityHeld) });
    }
    let event: UsageEventMessage | null = null;
    if (!quantity.isZero()) {
      const meter = await this.upstreams.meter(ctx, found.quota!.meterId, ctx.requestId);
      const external = found.quota!.externalCustomerId;
      const properties = meterProperties(meter.aggregation, quantity);
      event = toMessage(
        { event_name: meter.eventName, external_customer_id: external, timestamp: this.clock().toISOString(), properties, event_id: found.id },
        ctx,
        this.clock().toISOString(),
      );
    }
    return this.end(ctx, id, { quantity, event }, (r) => this.sameQuantity(r, quantity));
  }

  /**
   * A commit by usage event, of either kind of hold: the event as given (`event_id` = the
   * reservation id) sent in the commit's transaction; the hold counts whole until the event is
   * counted (`UsageSettlement`: in the check's usage, or in the wallet's real-time balance).
   */
  async commitEvent(ctx: Ctx, id: string, input: UsageEventInput): Promise<Reservation> {
    const found = await this.store.byId(this.db, ctx, id);
    if (!found) throw new NotFoundError(`Reservation ${id} not found`, { reservation_id: id });
    const named = await this.customerOfExternal(ctx, input.external_customer_id).catch((err: unknown) => {
      if (err instanceof NotFoundError) return null;
      throw err;
    });
    if (named !== found.customerId) {
      throw new ValidationError("event.external_customer_id must be the reservation's customer", { field: 'event.external_customer_id', customer_id: found.customerId });
    }
    const event = commitEventOf(found, input, this.clock());
    if (found.status === 'committed') return sameCommitEvent(found, event);
    return this.end(ctx, id, { quantity: null, event }, (r) => sameCommitEvent(r, event));
  }

  private async end(ctx: Ctx, id: string, commit: { quantity: Decimal | null; event: UsageEventMessage | null }, again: (r: Reservation) => Reservation): Promise<Reservation> {
    const ended = await this.db.transaction(async (trx) => {
      const r = (await this.store.lockById(trx, ctx, id))!;
      if (r.status === 'committed') return again(r);
      const now = this.clock();
      if (statusAt(r, now) !== 'held') {
        const status = statusAt(r, now);
        throw new ValidationError(`The reservation is ${status}: it cannot be committed`, { field: 'status', status, reservation_id: r.id });
      }
      failpoint('reservations.usage-commit.before-event');
      if (commit.event) await sendUsageEvent(trx, commit.event);
      failpoint('reservations.usage-commit.after-event');
      await this.store.end(trx, r.id, { status: 'committed', creditsCommitted: null, transactionId: null, quantityCommitted: commit.quantity ?? undefined, commitEvent: commit.event ?? undefined }, now);
      const out: Reservation = {
        ...r,
        status: 'committed',
        quota: r.quota && { ...r.quota, quantityCommitted: commit.quantity },
        commitEvent: commit.event,
        // Nothing sent (a commit of 0): nothing to wait for.
        settledAt: null,
        updatedAt: now,
        endedAt: now,
      };
      await this.store.announce(trx, ctx, [out], 'reservation.committed', now);
      return out;
    });
    failpoint('reservations.usage-commit.after-commit');
    this.published();
    return ended;
  }

  private async quotaHold(ctx: Scope, id: string): Promise<Reservation> {
    const r = await this.store.byId(this.db, ctx, id);
    if (!r) throw new NotFoundError(`Reservation ${id} not found`, { reservation_id: id });
    if (!r.quota) throw new ValidationError('This reservation holds credits: commit it by credits or event', { field: 'quantity', reservation_id: id });
    return r;
  }

  private sameQuantity(r: Reservation, quantity: Decimal): Reservation {
    if (r.quota?.quantityCommitted?.equals(quantity)) return r;
    throw new ValidationError('The reservation was already committed otherwise', { field: 'status', status: r.status });
  }
}

/** The same commit by event again answers the committed reservation; any other commit is 400 `status`. */
export function sameCommitEvent(r: Reservation, event: UsageEventMessage): Reservation {
  if (r.commitEvent && !r.quota?.quantityCommitted && sameEvent(r.commitEvent, event)) return r;
  throw new ValidationError('The reservation was already committed otherwise', { field: 'status', status: r.status });
}

/** The properties of an event worth `quantity` on a meter: SUM counts the field, COUNT counts 1 per event. */
function meterProperties(aggregation: { type: string; field: string | null }, quantity: Decimal): Record<string, unknown> {
  if (aggregation.type === 'SUM' && aggregation.field) return { [aggregation.field]: exact(quantity.toNumber()).equals(quantity) ? quantity.toNumber() : toDecimalString(quantity) };
  if (aggregation.type === 'COUNT' && quantity.equals(1)) return {};
  throw new ValidationError(`A commit by quantity needs a SUM meter (or COUNT and quantity 1); this meter aggregates by ${aggregation.type}: commit by event`, {
    field: 'quantity',
    aggregation: aggregation.type,
  });
}
