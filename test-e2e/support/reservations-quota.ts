import type { Db } from '@billstream/db';
import { Exact } from '@billstream/money';
import { waitFor, type ApiResponse } from '@billstream/testing';
import type { ProcessStack } from './stack';

/**
 * The failpoints of holds of entitlements, commits by quantity and by usage event, and their
 * settlement (ADR 0017's table, ADR 0070), each with the call that reaches it, in the order the
 * crash test kills at them: one restart a point, the process armed with one also running the
 * retry of the one before and the set-up of its own (test-e2e/support/reservations.ts). A retry
 * after a kill inside a transaction runs its call's whole path again (a create's path holds no
 * commit point, a commit's no create point, hence the alternation); a retry after a commit only
 * answers what is stored. `reservations.settle.after-seen` fires at any committed hold's
 * settlement, so it goes first, before any commit of this loop is pending.
 */
export const QUOTA_POINTS = [
  { point: 'reservations.settle.after-seen', call: 'event' },
  { point: 'reservations.usage-commit.before-event', call: 'quantity' },
  { point: 'reservations.quota-create.before-commit', call: 'create' },
  { point: 'reservations.usage-commit.after-event', call: 'quantity' },
  { point: 'reservations.quota-create.after-commit', call: 'create' },
  { point: 'reservations.usage-commit.after-commit', call: 'quantity' },
  { point: 'reservations.usage-commit.after-commit', call: 'event' },
] as const;
export type QuotaPoint = (typeof QUOTA_POINTS)[number];

const LIMIT = 100;
const HELD = 10;
/** A commit by quantity commits 4; a commit by event sends an event of 4 tokens (a SUM meter). */
const USED = 4;

interface Left {
  holds: number;
  status?: string;
  /** Usage events of the hold in the wallet's outbox. */
  sent: number;
  /** Written seen (the aggregator stored the event), not settled. */
  seen?: boolean;
}

/** What a kill at `p` has left in the database. */
function leftByKill(p: QuotaPoint): Left {
  if (p.point === 'reservations.quota-create.before-commit') return { holds: 0, sent: 0 };
  if (p.point === 'reservations.settle.after-seen') return { holds: 1, status: 'committed', sent: 1, seen: true };
  if (p.point === 'reservations.usage-commit.after-commit') return { holds: 1, status: 'committed', sent: 1, seen: false };
  // Killed inside the transaction (Postgres rolled it back), or after a create's commit: held.
  return { holds: 1, status: 'held', sent: 0 };
}

/**
 * The crash proofs of holds of a METERED hard-limit entitlement on the process stack: every call
 * through the gateway, the wallet killed by its own failpoint, the wallet's and the aggregator's
 * tables read directly for what was left.
 */
export function quotaCrash(stack: ProcessStack, db: { wallet: Db; ingestion: Db }) {
  const api = stack.api;
  const run = Date.now().toString(36);

  /** One meter (SUM of tokens), one METERED feature of it, one plan granting it hard-limited to 100; `n` customers subscribed. */
  async function entitledCustomers(n: number) {
    const meter = (await api.post('/v1/meters', { name: 'tokens', event_name: `tokens-${run}`, aggregation: { type: 'SUM', field: 'tokens' } })).body;
    const feature = (await api.post('/v1/features', { name: 'Tokens', lookup_key: `tokens-${run}`, type: 'METERED', meter_id: meter.id })).body;
    const plan = (await api.post('/v1/plans', { name: 'Tokens', prices: [{ type: 'FIXED', currency: 'usd', amount: '0', billing_model: 'FLAT_FEE', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE' }] })).body;
    expect((await api.post('/v1/entitlements', { plan_id: plan.id, feature_id: feature.id, usage_limit: String(LIMIT), usage_reset_period: 'NEVER' })).status).toBe(201);
    const customers = await Promise.all(
      Array.from({ length: n }, async (_, i) => {
        const external = `quota-crash-${run}-${i}`;
        const c = await api.post('/v1/customers', { external_customer_id: external });
        expect(c.status).toBe(201);
        expect((await api.post('/v1/subscriptions', { customer_id: c.body.id, plan_id: plan.id })).status).toBe(201);
        const check = async () => (await api.post('/v1/entitlements/check', { customer_id: c.body.id, feature_lookup_key: feature.lookup_key, quantity: '0' })).body;
        await waitFor(async () => (await check()).limit === String(LIMIT), { what: 'the grant in the check', timeoutMs: 20_000 });
        return { id: c.body.id as string, external, check };
      }),
    );
    return { meter, feature, customers };
  }
  type World = Awaited<ReturnType<typeof entitledCustomers>>;
  type Customer = World['customers'][number];

  /** The customer's reservations, the usage events of the wallet's outbox and the aggregator's stored events of `id`, the reservation events keyed by the customer. */
  async function stored(customerId: string, id?: string) {
    const reservations: Array<{ id: string; status: string; idempotency_key: string; event_seen_at: Date | null; settled_at: Date | null }> = await db
      .wallet('reservations')
      .where({ customer_id: customerId })
      .orderBy('id');
    const rid = id ?? reservations[0]?.id ?? '-';
    const sent = (await db.wallet('outbox').where({ topic: 'usage-events' }).whereRaw("value::jsonb->>'event_id' = ?", [rid]).count({ n: '*' }))[0]!.n;
    const kept = (await db.ingestion('events').where({ event_id: rid }).count({ n: '*' }))[0]!.n;
    const outbox: Array<{ value: string }> = await db.wallet('outbox').where({ message_key: customerId }).orderBy('seq').select('value');
    const events = outbox
      .map((o) => JSON.parse(o.value) as { type: string; payload: { reservation?: { id: string } } })
      .filter((e) => e.type.startsWith('reservation.'))
      .map((e) => `${e.type} ${e.payload.reservation!.id}`);
    return { reservations, sent: Number(sent), kept: Number(kept), events };
  }

  /** Every point in turn (ADR 0017's one restart a point), then an unarmed restart and the last proof; then every commit's settlement. */
  async function runAll(points: readonly QuotaPoint[]): Promise<{ setupMs: number; killsMs: number; settleMs: number }> {
    const t0 = Date.now();
    const world = await entitledCustomers(points.length);
    const t1 = Date.now();
    let proof: (() => Promise<void>) | undefined;
    for (const [i, p] of points.entries()) {
      await stack.restart('wallet', { BILLSTREAM_FAILPOINTS: p.point });
      if (proof) await proof();
      proof = await killAt(p, world, world.customers[i]!);
    }
    await stack.restart('wallet');
    if (proof) await proof();
    const t2 = Date.now();
    await Promise.all(settling.map(proveSettled));
    return { setupMs: t1 - t0, killsMs: t2 - t1, settleMs: Date.now() - t2 };
  }

  /** In a wallet armed with `p.point`: a hold of 10 of the 100 (the trigger itself for a create), the call that kills it, and what the kill left. Answers the proof. */
  async function killAt(p: QuotaPoint, world: World, c: Customer): Promise<() => Promise<void>> {
    const tag = `${p.point} (${p.call})`;
    const body = { customer_id: c.id, feature_id: world.feature.id, quantity: String(HELD), expires_in: 3600, idempotency_key: `quota-crash-${run}-${c.external}` };
    const event = { event_name: world.meter.event_name, external_customer_id: c.external, timestamp: new Date().toISOString(), properties: { tokens: USED } };
    let id: string | undefined;
    if (p.call !== 'create') {
      const held = await api.post('/v1/reservations', body);
      expect([tag, held.status]).toEqual([tag, 201]);
      id = held.body.id;
    }
    const call = (): Promise<ApiResponse> => {
      if (p.call === 'quantity') return api.post(`/v1/reservations/${id}/commit`, { quantity: String(USED) });
      if (p.call === 'event') return api.post(`/v1/reservations/${id}/commit`, { event });
      return api.post('/v1/reservations', body);
    };
    const first = await call();
    // The settlement kills the process after the commit answered, once the aggregator stored the event.
    if (p.point === 'reservations.settle.after-seen') expect([tag, first.status]).toEqual([tag, 200]);
    else expect([tag, first.status >= 500]).toEqual([tag, true]);
    await waitFor(() => !stack.running('wallet'), { timeoutMs: 15_000, what: `the wallet to kill itself at ${tag}` });
    expect(stack.logs('wallet')).toContain(`failpoint ${p.point}: SIGKILL`);

    const left = leftByKill(p);
    const atKill = await stored(c.id, id);
    expect([tag, atKill.reservations.length, atKill.sent]).toEqual([tag, left.holds, left.sent]);
    if (left.status) expect([tag, atKill.reservations[0]!.status, atKill.reservations[0]!.settled_at]).toEqual([tag, left.status, null]);
    if (left.seen !== undefined) expect([tag, atKill.reservations[0]!.event_seen_at !== null]).toEqual([tag, left.seen]);
    if (left.seen) expect([tag, atKill.kept]).toEqual([tag, 1]);
    return () => proveAfter(p, c, { call, body, id: id ?? atKill.reservations[0]?.id });
  }

  /**
   * The client's call retried once the wallet is up: one hold, its end once, one usage event in
   * the outbox (event_id = the reservation id), the check's held and remaining right; a commit's
   * settlement is proven after the loop (`proveSettled`).
   */
  async function proveAfter(p: QuotaPoint, c: Customer, k: { call: () => Promise<ApiResponse>; body: { idempotency_key: string }; id?: string }): Promise<void> {
    const tag = `${p.point} (${p.call})`;
    const retried = await k.call();
    const create = p.call === 'create';
    expect([tag, retried.status]).toEqual([tag, create ? 201 : 200]);
    const id = k.id ?? retried.body.id;
    expect(retried.body).toMatchObject({ id, status: create ? 'held' : 'committed', quantity_held: String(HELD), quantity_committed: p.call === 'quantity' ? String(USED) : null });
    const after = await stored(c.id, id);
    expect([tag, after.reservations.map((r) => [r.id, r.status, r.idempotency_key])]).toEqual([tag, [[id, create ? 'held' : 'committed', k.body.idempotency_key]]]);
    expect([tag, after.sent]).toEqual([tag, create ? 0 : 1]);
    if (create) {
      // The check keeps `held` at most 1 s, dropped by the hold's event (docs/api/entitlements.md, "Freshness").
      await waitFor(async () => (await c.check()).held === String(HELD), { timeoutMs: 2000, intervalMs: 20, what: `${tag}: the hold on the check` });
      expect([tag, await c.check()]).toEqual([tag, expect.objectContaining({ usage: '0', held: String(HELD), remaining: String(LIMIT - HELD) })]);
      expect([tag, after.events]).toEqual([tag, [`reservation.created ${id}`]]);
      return;
    }
    // Committed: the hold counts its quantity (or, by event, its whole hold) until it is settled.
    expect([tag, new Exact((await c.check()).remaining).lte(LIMIT - USED)]).toEqual([tag, true]);
    expect([tag, after.events]).toEqual([tag, [`reservation.created ${id}`, `reservation.committed ${id}`]]);
    settling.push({ tag, c, id });
  }

  /** Committed holds proven but for their settlement, waited for together after the loop (no 2 s wait a point). */
  const settling: Array<{ tag: string; c: Customer; id: string }> = [];

  /** Each committed hold settled once, its event stored once, the check counting the usage and nothing held; remaining never above its final value meanwhile. */
  async function proveSettled({ tag, c, id }: (typeof settling)[number]): Promise<void> {
    const final = LIMIT - USED;
    const remainings: string[] = [];
    await waitFor(
      async () => {
        const check = await c.check();
        remainings.push(check.remaining);
        return (await api.get(`/v1/reservations/${id}`)).body.settled_at !== null && check.held === '0' && check.usage === String(USED);
      },
      { timeoutMs: 15_000, intervalMs: 50, what: `${tag}: the commit settled and counted` },
    );
    // Counted twice for a moment (usage and the committed hold), never once too few.
    expect([tag, remainings.filter((v) => new Exact(v).gt(final))]).toEqual([tag, []]);
    expect([tag, await c.check()]).toEqual([tag, expect.objectContaining({ usage: String(USED), held: '0', remaining: String(final) })]);
    const settled = await stored(c.id, id);
    expect([tag, settled.kept, settled.sent]).toEqual([tag, 1, 1]);
    expect([tag, settled.events]).toEqual([tag, [`reservation.created ${id}`, `reservation.committed ${id}`]]);
    // Written once: a later round (or a replica) leaves it as it is.
    const at = new Date(settled.reservations[0]!.settled_at!).getTime();
    await new Promise((r) => setTimeout(r, 300));
    expect([tag, new Date((await stored(c.id, id)).reservations[0]!.settled_at!).getTime()]).toEqual([tag, at]);
  }

  return { runAll };
}
