/**
 * Reservations (docs/api/reservations.md): hold credits of a PRE_PAID wallet (or quantity of a
 * METERED hard-limit entitlement) before the work starts, commit what it cost, release what it
 * did not use. `withReservation` is the pattern
 * for metered work such as an LLM call: reserve the maximum, do the work, commit the actual;
 * an error in the work releases the hold.
 */
import type { CallOptions, RequestBody, ResponseBody } from './types';

export type Reservation = ResponseBody<'/v1/reservations', 'post'>;
/** A reservation's body; `idempotency_key` is filled in when left out (retries then hold once). */
export type ReserveParams = Omit<RequestBody<'/v1/reservations', 'post'>, 'idempotency_key' | 'expires_in' | 'allow_overage'> & {
  idempotency_key?: string;
  expires_in?: number;
  allow_overage?: boolean;
};

/** The usage event of a commit by event. */
export type CommitEvent = NonNullable<RequestBody<'/v1/reservations/{id}/commit', 'post'>['event']>;

/** What the work of `withReservation` answers: the credits to commit, and its own value. */
export type WorkResult<T> = string | { credits: string; value: T };

export interface ReservationCalls {
  /** POST /v1/reservations: 402 `insufficient_credits` (a BillstreamError, `details.available`) when the credits fall short. */
  reserve(params: ReserveParams, options?: CallOptions): Promise<Reservation>;
  /** POST /v1/reservations/{id}/commit: one debit of `credits` (a decimal string), the rest released. */
  commit(id: string, credits: string, options?: CallOptions & { allowOverage?: boolean }): Promise<Reservation>;
  /** POST /v1/reservations/{id}/commit of a hold of an entitlement: the used `quantity` counted as usage of its meter, the rest released. */
  commitQuantity(id: string, quantity: string, options?: CallOptions): Promise<Reservation>;
  /** POST /v1/reservations/{id}/commit by usage event: ingested once (`event_id` = the reservation id), the hold kept until it is counted. */
  commitEvent(id: string, event: CommitEvent, options?: CallOptions): Promise<Reservation>;
  /** POST /v1/reservations/{id}/release: the hold released whole. */
  release(id: string, options?: CallOptions): Promise<Reservation>;
  /**
   * Reserves, runs `work` with the reservation, commits the credits it answers and gives back
   * the committed reservation and the work's value. An error of the work (or a refused
   * commit) releases the hold and is thrown again; a failed release is left to the hold's
   * expiry (`expires_in`) and does not hide the first error.
   */
  withReservation<T = undefined>(params: ReserveParams, work: (reservation: Reservation) => Promise<WorkResult<T>>): Promise<{ reservation: Reservation; value: T | undefined }>;
}

type Post = (path: string, init: Record<string, unknown>) => Promise<unknown>;

export function reservationCalls(post: Post): ReservationCalls {
  const calls: ReservationCalls = {
    async reserve(params, options = {}) {
      return (await post('/v1/reservations', { ...options, body: params })) as Reservation;
    },
    async commit(id, credits, options = {}) {
      const { allowOverage, ...rest } = options;
      const body = allowOverage === undefined ? { credits } : { credits, allow_overage: allowOverage };
      return (await post('/v1/reservations/{id}/commit', { ...rest, params: { path: { id } }, body })) as Reservation;
    },
    async commitQuantity(id, quantity, options = {}) {
      return (await post('/v1/reservations/{id}/commit', { ...options, params: { path: { id } }, body: { quantity } })) as Reservation;
    },
    async commitEvent(id, event, options = {}) {
      return (await post('/v1/reservations/{id}/commit', { ...options, params: { path: { id } }, body: { event } })) as Reservation;
    },
    async release(id, options = {}) {
      return (await post('/v1/reservations/{id}/release', { ...options, params: { path: { id } }, body: {} })) as Reservation;
    },
    async withReservation(params, work) {
      const held = await calls.reserve(params);
      let outcome: WorkResult<unknown>;
      try {
        outcome = await work(held);
      } catch (err) {
        await calls.release(held.id).catch(() => undefined);
        throw err;
      }
      const credits = typeof outcome === 'string' ? outcome : outcome.credits;
      try {
        const reservation = await calls.commit(held.id, credits);
        return { reservation, value: typeof outcome === 'string' ? undefined : (outcome.value as never) };
      } catch (err) {
        await calls.release(held.id).catch(() => undefined);
        throw err;
      }
    },
  };
  return calls;
}
