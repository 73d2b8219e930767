import type { Db } from '@billstream/db';
import { waitFor, type ApiResponse } from '@billstream/testing';
import { assertLedgerAddsUp } from '@billstream/wallet';
import type { ProcessStack } from './stack';

/**
 * The reservation failpoints of the wallet service (ADR 0017's table),
 * `reservations.{create|commit|release|expiry}.{step}`, in the order the crash test kills at
 * them. The process armed with one also runs the retry of the one before and the set-up of its
 * own, so each point is on neither path: a retry after a kill inside a transaction runs its
 * action's whole path again (not the next point's action), a retry after a commit only answers
 * what is stored, and a create passes no expiry point. Kept in this order, one restart a point.
 */
export const RESERVATION_POINTS = [
  'reservations.expiry.after-commit',
  'reservations.create.before-commit',
  'reservations.commit.before-debit',
  'reservations.release.before-commit',
  'reservations.create.after-commit',
  'reservations.commit.after-debit',
  'reservations.release.after-commit',
  'reservations.commit.after-commit',
  'reservations.expiry.before-commit',
] as const;
export type ReservationPoint = (typeof RESERVATION_POINTS)[number];

type Action = 'create' | 'commit' | 'release' | 'expiry';
/** The status a reservation ends with once the retried call (or the expiry job) is done. */
const FINAL: Record<Action, string> = { create: 'held', commit: 'committed', release: 'released', expiry: 'expired' };
/** The event that ends a hold, by its final status. */
const ENDED: Record<string, string | undefined> = { committed: 'reservation.committed', released: 'reservation.released', expired: 'reservation.expired' };

const LOADED = 100;
const HELD = 30;
const COMMITTED = 12;

interface Row {
  id: string;
  status: string;
  idempotency_key: string;
  transaction_id: string | null;
}

/** The wallet's reservations and RESERVATION_CAPTURE debits, and the reservation events of its outbox, straight from the wallet's schema. */
async function stored(walletDb: Db, walletId: string) {
  const reservations: Row[] = await walletDb('reservations').where({ wallet_id: walletId }).orderBy('id');
  const captures: Array<{ id: string; credit_amount: string; idempotency_key: string }> = await walletDb('transactions')
    .where({ wallet_id: walletId, transaction_reason: 'RESERVATION_CAPTURE' })
    .select('id', 'credit_amount', 'idempotency_key');
  const outbox: Array<{ value: string }> = await walletDb('outbox').where({ message_key: walletId }).orderBy('seq').select('value');
  const events = outbox
    .map((o) => JSON.parse(o.value) as { type: string; payload: { reservation?: { id: string } } })
    .filter((e) => e.type.startsWith('reservation.'))
    .map((e) => `${e.type} ${e.payload.reservation!.id}`);
  return { reservations, captures, events };
}

/** What a kill at `point` has left in the database: the hold (or none) and whether its end or debit was committed. */
function leftByKill(point: ReservationPoint): { holds: number; status?: string; captured: boolean } {
  if (point === 'reservations.create.before-commit') return { holds: 0, captured: false };
  if (point === 'reservations.commit.after-commit') return { holds: 1, status: 'committed', captured: true };
  if (point === 'reservations.release.after-commit') return { holds: 1, status: 'released', captured: false };
  if (point === 'reservations.expiry.after-commit') return { holds: 1, status: 'expired', captured: false };
  // Killed inside the transaction: Postgres rolled it back, the hold is as it was.
  return { holds: 1, status: 'held', captured: false };
}

/**
 * The crash proofs of reservations on the process stack: every call through the gateway, the
 * wallet process killed by its own failpoint, the database read directly for what was left.
 */
export function reservationCrash(stack: ProcessStack, walletDb: Db) {
  const api = stack.api;

  async function walletOf(customerId: string, credits: string): Promise<string> {
    const w = await api.post('/v1/wallets', { customer_id: customerId, currency: 'usd', initial_credits_to_load: credits });
    expect(w.status).toBe(201);
    return w.body.id as string;
  }

  /**
   * Every point of `points` in turn: the wallet restarted armed with it (which first finishes the
   * previous point's proof), its kill, and after the last an unarmed restart and its proof.
   */
  async function runAll(points: readonly ReservationPoint[], newCustomer: () => Promise<string>): Promise<void> {
    let proof: (() => Promise<void>) | undefined;
    for (const point of points) {
      await stack.restart('wallet', { BILLSTREAM_FAILPOINTS: point });
      if (proof) await proof();
      proof = await killAt(point, await newCustomer());
    }
    await stack.restart('wallet');
    if (proof) await proof();
  }

  /**
   * In a wallet process armed with `point`: one wallet of 100 credits, a hold of 30 (the trigger
   * itself for a point of the create or the expiry), the call that kills the process at `point`,
   * and what the kill left in the database. Answers the proof to run once the wallet is up again:
   * the client's call retried; then exactly one hold with the right status, one debit of 12 for a
   * commit, the balance, credits_held, one event per step and a ledger that adds up.
   */
  async function killAt(point: ReservationPoint, customerId: string): Promise<() => Promise<void>> {
    const action = point.split('.')[1] as Action;
    const walletId = await walletOf(customerId, String(LOADED));
    const body = { customer_id: customerId, currency: 'usd', credits: String(HELD), expires_in: action === 'expiry' ? 1 : 3600, idempotency_key: `crash-${point}-${Date.now()}`, metadata: { point } };
    let id: string | undefined;
    if (action === 'commit' || action === 'release') {
      const held = await api.post('/v1/reservations', body);
      expect(held.status).toBe(201);
      id = held.body.id;
    }
    const call = (): Promise<ApiResponse> => {
      if (action === 'commit') return api.post(`/v1/reservations/${id}/commit`, { credits: String(COMMITTED) });
      if (action === 'release') return api.post(`/v1/reservations/${id}/release`, {});
      return api.post('/v1/reservations', body);
    };

    const first = await call();
    if (action === 'expiry') {
      // The hold is made; the expiry job kills the process when it writes it expired (within 1 s).
      expect(first.status).toBe(201);
      id = first.body.id;
    } else {
      expect(first.status).toBeGreaterThanOrEqual(500);
    }
    await waitFor(() => !stack.running('wallet'), { timeoutMs: 10_000, what: `the wallet to kill itself at ${point}` });
    expect(stack.logs('wallet')).toContain(`failpoint ${point}: SIGKILL`);

    const left = leftByKill(point);
    const atKill = await stored(walletDb, walletId);
    expect([point, atKill.reservations.length]).toEqual([point, left.holds]);
    if (left.status) expect([point, atKill.reservations[0]!.status]).toEqual([point, left.status]);
    expect([point, atKill.captures.length]).toEqual([point, left.captured ? 1 : 0]);

    return () => proveAfter(point, { walletId, body, call, atKill, left, id });
  }

  async function proveAfter(
    point: ReservationPoint,
    k: { walletId: string; body: { idempotency_key: string }; call: () => Promise<ApiResponse>; atKill: Awaited<ReturnType<typeof stored>>; left: ReturnType<typeof leftByKill>; id?: string },
  ): Promise<void> {
    const action = point.split('.')[1] as Action;
    const { walletId, body, call, atKill, left } = k;
    let id = k.id;
    const retried = await call();
    if (action === 'expiry') {
      await waitFor(async () => (await walletDb('reservations').where({ id }).first()).status === 'expired', { timeoutMs: 5_000, what: `${id} written expired after the restart` });
      // The create's retry answers the same hold, now expired; a commit of it is refused and debits nothing.
      expect([point, retried.status, retried.body.id, retried.body.status]).toEqual([point, 201, id, 'expired']);
      const late = await api.post(`/v1/reservations/${id}/commit`, { credits: String(COMMITTED) });
      expect([point, late.status, late.body.error?.details]).toEqual([point, 400, expect.objectContaining({ field: 'status', status: 'expired' })]);
    } else {
      expect([point, retried.status]).toEqual([point, action === 'create' ? 201 : 200]);
      id = id ?? retried.body.id;
      expect(retried.body).toMatchObject({ id, status: FINAL[action], credits_held: String(HELD) });
      if (left.holds === 1) expect(retried.body.id).toBe(atKill.reservations[0]!.id);
    }

    const after = await stored(walletDb, walletId);
    expect([point, after.reservations.map((r) => [r.id, r.status, r.idempotency_key])]).toEqual([point, [[id, FINAL[action], body.idempotency_key]]]);
    if (action === 'commit') {
      expect([point, after.captures.map((c) => [Number(c.credit_amount), c.idempotency_key])]).toEqual([point, [[COMMITTED, `reservation:${id}`]]]);
      expect(after.reservations[0]!.transaction_id).toBe(after.captures[0]!.id);
      expect(retried.body).toMatchObject({ credits_committed: String(COMMITTED), transaction_id: after.captures[0]!.id });
    } else {
      expect([point, after.captures]).toEqual([point, []]);
    }
    const ended = ENDED[FINAL[action]];
    // Outbox rows are written once per committed step: the kill and the retry doubled none.
    await waitFor(async () => (await stored(walletDb, walletId)).events.length === (ended ? 2 : 1), { timeoutMs: 5_000, what: `the events of ${id}` });
    expect([point, (await stored(walletDb, walletId)).events]).toEqual([point, [`reservation.created ${id}`, ...(ended ? [`${ended} ${id}`] : [])]]);

    const spent = action === 'commit' ? COMMITTED : 0;
    const held = action === 'create' ? HELD : 0;
    const balance = await api.get(`/v1/wallets/${walletId}/balance`);
    expect([point, balance.status, balance.body]).toEqual([
      point,
      200,
      expect.objectContaining({ credit_balance: String(LOADED - spent), credits_held: String(held), credits_available: String(LOADED - spent - held) }),
    ]);
    await assertLedgerAddsUp(walletDb, walletId, new Date());
  }

  /**
   * `n` holds of 10 on one wallet of 1,000, each committed (4 credits) or released at an instant
   * spread from 300 ms before its `expires_at` to 300 ms after it, while the expiry job runs.
   * Each ends exactly once: a 200 is committed or released (a commit with its one debit), a 400
   * `status` is expired with no debit; the balance is 1,000 less 4 per commit that won.
   */
  async function raceExpiry(customerId: string, n: number): Promise<{ won: number; expired: number }> {
    const walletId = await walletOf(customerId, '1000');
    const holds = await Promise.all(
      Array.from({ length: n }, (_, i) => api.post('/v1/reservations', { customer_id: customerId, currency: 'usd', credits: '10', expires_in: 5, idempotency_key: `race-${walletId}-${i}` })),
    );
    expect(holds.map((h) => h.status)).toEqual(holds.map(() => 201));
    const calls = holds.map((h, i) => {
      // Spread from 2 s before expires_at to 0.5 s after it: the early ones win even when a loaded
      // machine answers late, the late ones find the hold expired, and those near the instant race it.
      const at = new Date(h.body.expires_at).getTime() - 2000 + (2500 * i) / (n - 1);
      const commit = i % 2 === 0;
      return new Promise<{ id: string; commit: boolean; res: ApiResponse }>((resolve, reject) => {
        setTimeout(() => {
          const res = commit ? api.post(`/v1/reservations/${h.body.id}/commit`, { credits: '4' }) : api.post(`/v1/reservations/${h.body.id}/release`, {});
          res.then((r) => resolve({ id: h.body.id, commit, res: r }), reject);
        }, Math.max(0, at - Date.now()));
      });
    });
    const answers = await Promise.all(calls);
    await waitFor(async () => (await walletDb('reservations').where({ wallet_id: walletId, status: 'held' })).length === 0, { timeoutMs: 5_000, what: 'every hold ended' });

    const after = await stored(walletDb, walletId);
    const byId = new Map(after.reservations.map((r) => [r.id, r]));
    let won = 0;
    let committed = 0;
    for (const { id, commit, res } of answers) {
      const row = byId.get(id)!;
      const captures = after.captures.filter((c) => c.idempotency_key === `reservation:${id}`);
      if (res.status === 200) {
        won += 1;
        expect([id, row.status, res.body.status]).toEqual([id, commit ? 'committed' : 'released', commit ? 'committed' : 'released']);
        expect([id, captures.length]).toEqual([id, commit ? 1 : 0]);
        if (commit) committed += 1;
        if (commit) expect(row.transaction_id).toBe(captures[0]!.id);
      } else {
        expect([id, res.status, res.body.error?.details]).toEqual([id, 400, expect.objectContaining({ field: 'status', status: 'expired' })]);
        expect([id, row.status, captures.length]).toEqual([id, 'expired', 0]);
      }
      // One event ends each hold: the one of its final status.
      await waitFor(async () => (await stored(walletDb, walletId)).events.filter((e) => e.endsWith(id)).length === 2, { timeoutMs: 5_000, what: `the events of ${id}` });
      const events = (await stored(walletDb, walletId)).events.filter((e) => e.endsWith(id));
      expect(events).toEqual([`reservation.created ${id}`, `${ENDED[row.status]} ${id}`]);
    }
    expect(after.captures).toHaveLength(committed);
    const balance = await api.get(`/v1/wallets/${walletId}/balance`);
    expect(balance.body).toMatchObject({ credit_balance: String(1000 - 4 * committed), credits_held: '0', credits_available: String(1000 - 4 * committed) });
    await assertLedgerAddsUp(walletDb, walletId, new Date());
    return { won, expired: n - won };
  }

  return { runAll, raceExpiry };
}
