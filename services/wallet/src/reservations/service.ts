import { createHash } from 'node:crypto';
import type { Db, Trx } from '@billstream/db';
import { IdempotencyConflictError, InsufficientCreditsError, NotFoundError, PG_UNIQUE_VIOLATION, ValidationError, pgErrorCode } from '@billstream/errors';
import { newId } from '@billstream/ids';
import { toDecimalString } from '@billstream/money';
import type { EventContext } from '@billstream/outbox';
import { failpoint } from '@billstream/runtime';
import { Decimal } from 'decimal.js';
import type { CustomerDirectory } from '../customers/directory';
import type { WalletChange } from '../ledger/change';
import { debit } from '../ledger/debit';
import type { Ledger } from '../ledger/ledger';
import { flush } from '../ledger/writes';
import { creditsAvailableOf } from '../wallets/view';
import { creditReservationOf, statusAt, type CreditReservation, type Reservation, type ReservationRequest, type ReservationStatus } from './domain';
import type { ReservationStore } from './store';
import { reservationView } from './view';

/** How the wire names the customer of a new reservation (exactly one of the two). */
export type CustomerRef = { customerId: string } | { externalCustomerId: string };

/** A commit by credits; `allowOverage` of the call, else the reservation's own. */
export interface CommitRequest {
  credits: Decimal;
  allowOverage?: boolean;
}

/** The key of a commit's RESERVATION_CAPTURE debit: one per reservation, whoever retries. */
export const captureKeyOf = (id: string): string => `reservation:${id}`;

function hashOf(request: Record<string, unknown>): string {
  return createHash('sha256').update(JSON.stringify(request)).digest('hex');
}

function statusError(r: Reservation, now: Date, wanted: string): ValidationError {
  const status = statusAt(r, now);
  return new ValidationError(`The reservation is ${status}: it cannot be ${wanted}`, { field: 'status', status, reservation_id: r.id });
}

/**
 * Holds of a customer's PRE_PAID wallet (docs/api/reservations.md, ADR 0068). A hold is made
 * and committed inside the wallet's ledger change (its row lock), so two holds, or a hold and
 * a debit, of one wallet never both count the same credits: Σ live holds + debits never exceed
 * what was available. A release or an expiry only gives credits back: the reservation's row
 * lock is enough for them.
 */
export class ReservationService {
  constructor(
    private readonly db: Db,
    private readonly ledger: Ledger,
    private readonly store: ReservationStore,
    private readonly customers: CustomerDirectory,
  ) {}

  /** The customer's id (404 naming the field given when there is none), before any transaction. */
  async customerOf(ctx: EventContext & { requestId: string }, ref: CustomerRef): Promise<string> {
    if ('externalCustomerId' in ref) return this.customers.resolveExternal(ctx, ref.externalCustomerId, ctx.requestId);
    await this.customers.ensureExists(ctx, ref.customerId, ctx.requestId);
    return ref.customerId;
  }

  async create(ctx: EventContext, request: ReservationRequest): Promise<Reservation> {
    const currency = request.currency.toLowerCase();
    const hash = hashOf({
      customer_id: request.customerId,
      currency,
      credits: request.credits && toDecimalString(request.credits),
      amount: request.amount && toDecimalString(request.amount),
      expires_in: request.expiresInSeconds,
      allow_overage: request.allowOverage,
      metadata: request.metadata,
    });
    const replay = (earlier: Reservation) => {
      if (earlier.requestHash !== hash) {
        throw new IdempotencyConflictError('This idempotency_key was already used with another reservation', { field: 'idempotency_key', reservation_id: earlier.id });
      }
      return earlier;
    };
    const earlier = await this.store.byKey(this.db, ctx, request.idempotencyKey);
    if (earlier) return replay(earlier);
    const walletId = await this.store.activePrepaidWallet(this.db, ctx, request.customerId, currency);
    if (!walletId) {
      throw new ValidationError(`The customer has no active PRE_PAID wallet in ${currency}`, { field: 'currency', currency, customer_id: request.customerId });
    }
    try {
      const { result } = await this.ledger.transaction((trx) =>
        this.ledger.changeIn(trx, ctx, walletId, async (change) => {
          // A retry of the key that waited for the wallet's lock finds the first one's row.
          const first = await this.store.byKey(trx, ctx, request.idempotencyKey);
          if (first) return replay(first);
          return this.hold(trx, change, { ...request, currency }, hash);
        }),
      );
      failpoint('reservations.create.after-commit');
      return result;
    } catch (err) {
      // The same key on another wallet at the same moment: the unique key decides, the loser replays.
      if (pgErrorCode(err) !== PG_UNIQUE_VIOLATION) throw err;
      const winner = await this.store.byKey(this.db, ctx, request.idempotencyKey);
      if (!winner) throw err;
      return replay(winner);
    }
  }

  private async hold(trx: Trx, change: WalletChange, request: ReservationRequest, hash: string): Promise<Reservation> {
    change.requireActive();
    const w = change.wallet;
    // Money becomes credits at the wallet's rate, rounded up to 12 decimals (as credits by amount do).
    const credits = request.credits ?? request.amount!.div(w.conversionRate).toDecimalPlaces(12, Decimal.ROUND_UP);
    const available = creditsAvailableOf(w, await this.store.heldCredits(trx, w.id, change.now));
    if (credits.greaterThan(available)) {
      throw new InsufficientCreditsError('Not enough credits available for this reservation', {
        field: request.credits ? 'credits' : 'amount',
        available: toDecimalString(available),
        requested_credits: toDecimalString(credits),
        wallet_id: w.id,
      });
    }
    const r: Reservation = {
      id: newId('reservation'),
      tenantId: w.tenantId,
      environmentId: w.environmentId,
      customerId: w.customerId,
      walletId: w.id,
      currency: w.currency,
      status: 'held',
      creditsHeld: credits,
      creditsCommitted: null,
      quota: null,
      commitEvent: null,
      eventSeenAt: null,
      settledAt: null,
      transactionId: null,
      allowOverage: request.allowOverage,
      expiresAt: new Date(change.now.getTime() + request.expiresInSeconds * 1000),
      idempotencyKey: request.idempotencyKey,
      requestHash: hash,
      metadata: request.metadata,
      createdAt: change.now,
      updatedAt: change.now,
      endedAt: null,
    };
    await this.store.insert(trx, r);
    change.emit('reservation.created', { reservation: reservationView(r, change.now) });
    failpoint('reservations.create.before-commit');
    return r;
  }

  /**
   * One RESERVATION_CAPTURE debit of `credits` (none for 0), the rest released, under the
   * wallet's lock and then the reservation's. The same commit again answers it unchanged;
   * any other call on an ended reservation is 400 `status`.
   */
  async commit(ctx: EventContext, id: string, request: CommitRequest): Promise<Reservation> {
    const found = creditReservationOf(await this.get(ctx, id));
    if (found.status === 'committed') return this.sameCommit(found, request.credits);
    const { result } = await this.ledger.transaction((trx) =>
      this.ledger.changeIn(trx, ctx, found.walletId, async (change) => {
        const r = (await this.store.lockById(trx, ctx, id)) as CreditReservation;
        if (r.status === 'committed') return this.sameCommit(r, request.credits);
        if (statusAt(r, change.now) !== 'held') throw statusError(r, change.now, 'committed');
        await this.checkOverage(trx, change, r, request);
        change.requireActive();
        failpoint('reservations.commit.before-debit');
        const entry = request.credits.isZero()
          ? null
          : await debit(change, {
              credits: request.credits,
              reason: 'RESERVATION_CAPTURE',
              description: `reservation ${r.id}`,
              idempotencyKey: captureKeyOf(r.id),
              requestHash: null,
            });
        // The debit's row first: the reservation names it (a foreign key).
        if (entry) await flush(change);
        failpoint('reservations.commit.after-debit');
        const ended = { ...r, status: 'committed' as ReservationStatus, creditsCommitted: request.credits, transactionId: entry?.id ?? null, updatedAt: change.now, endedAt: change.now };
        await this.store.end(trx, r.id, { status: 'committed', creditsCommitted: request.credits, transactionId: ended.transactionId }, change.now);
        change.emit('reservation.committed', { reservation: reservationView(ended, change.now) });
        return ended;
      }),
    );
    failpoint('reservations.commit.after-commit');
    return result;
  }

  private sameCommit(r: Reservation, credits: Decimal): Reservation {
    if (r.creditsCommitted && r.creditsCommitted.equals(credits)) return r;
    throw new ValidationError('The reservation was already committed with other credits', {
      field: 'status',
      status: r.status,
      credits_committed: r.creditsCommitted && toDecimalString(r.creditsCommitted),
    });
  }

  /** More than held: 400 `credits` unless overage is allowed; then what is available (this hold's credits back) must cover it, else 402. */
  private async checkOverage(trx: Trx, change: WalletChange, r: CreditReservation, request: CommitRequest): Promise<void> {
    if (!request.credits.greaterThan(r.creditsHeld)) return;
    if (!(request.allowOverage ?? r.allowOverage)) {
      throw new ValidationError('The commit is larger than the credits held (allow_overage is false)', {
        field: 'credits',
        credits_held: toDecimalString(r.creditsHeld),
      });
    }
    const available = creditsAvailableOf(change.wallet, await this.store.heldCredits(trx, r.walletId, change.now, r.id));
    if (request.credits.greaterThan(available)) {
      throw new InsufficientCreditsError('Not enough credits available for this commit beyond its hold', {
        field: 'credits',
        available: toDecimalString(available),
        credits_held: toDecimalString(r.creditsHeld),
      });
    }
  }

  /** Releases a live hold whole; released already answers it unchanged; committed or expired is 400 `status`. */
  async release(ctx: EventContext, id: string): Promise<Reservation> {
    const out = await this.ledger.transaction(async (trx) => {
      const r = await this.store.lockById(trx, ctx, id);
      if (!r) throw new NotFoundError(`Reservation ${id} not found`, { reservation_id: id });
      const now = this.ledger.clock();
      if (r.status === 'released') return { result: r, events: [] };
      if (statusAt(r, now) !== 'held') throw statusError(r, now, 'released');
      const ended: Reservation = { ...r, status: 'released', updatedAt: now, endedAt: now };
      await this.store.end(trx, r.id, { status: 'released', creditsCommitted: null, transactionId: null }, now);
      const events = await this.store.announce(trx, ctx, [ended], 'reservation.released', now);
      failpoint('reservations.release.before-commit');
      return { result: ended, events };
    });
    failpoint('reservations.release.after-commit');
    return out.result;
  }

  async get(ctx: EventContext, id: string): Promise<Reservation> {
    const r = await this.store.byId(this.db, ctx, id);
    if (!r) throw new NotFoundError(`Reservation ${id} not found`, { reservation_id: id });
    return r;
  }

  list(ctx: EventContext, filter: { customerId?: string; status?: ReservationStatus }, page: { limit: number; offset: number }) {
    return this.store.list(this.db, ctx, filter, page, this.ledger.clock());
  }
}
