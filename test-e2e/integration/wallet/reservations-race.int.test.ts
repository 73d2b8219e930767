import { Exact } from '@billstream/money';
import { waitFor } from '@billstream/testing';
import { startReservationWorld, type ReservationWorld } from './reservations-support';

describe('reservations under concurrency and expiry through the gateway (real Postgres and Kafka)', () => {
  let w: ReservationWorld;
  beforeAll(async () => {
    w = await startReservationWorld('resv-race');
  });
  afterEach(async () => {
    await w.assertLedgers();
  });
  afterAll(async () => {
    await w?.stop();
  });

  const balance = async (walletId: string) => (await w.stack.api.get(`/v1/wallets/${walletId}/balance?include_real_time_balance=true`)).body;

  it.each([
    { n: 200, x: '7', b: '100', expected: 14 },
    { n: 50, x: '3', b: '100', expected: 33 },
    { n: 50, x: '0.3', b: '10', expected: 33 },
    { n: 200, x: '0.5', b: '100', expected: 200 },
  ])('$n parallel reservations of $x on a balance of $b: exactly floor(B / x) = $expected succeed, the others 402', async ({ n, x, b, expected }) => {
    const { id: walletId, customerId } = await w.wallet(b);
    const answers = await Promise.all(Array.from({ length: n }, () => w.reserve({ customer_id: customerId, credits: x, expires_in: 600 })));
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 201).length).toBe(expected);
    expect(statuses.filter((s) => s === 402).length).toBe(n - expected);
    for (const refused of answers.filter((a) => a.status === 402)) expect(refused.body.error.internal_error).toBe('insufficient_credits');
    const held = new Exact(x).times(expected);
    const rows = await w.walletDb('reservations').where({ wallet_id: walletId });
    expect(rows.length).toBe(expected);
    expect(await balance(walletId)).toMatchObject({ credit_balance: b, credits_held: held.toString(), credits_available: new Exact(b).minus(held).toString() });
  });

  it('writes a hold past expires_at expired within 1 s, and then refuses its commit and release with 400 status', async () => {
    const { id: walletId, customerId } = await w.wallet('10');
    const r = (await w.reserve({ customer_id: customerId, credits: '6', expires_in: 1 })).body;
    const expiresAt = Date.parse(r.expires_at);
    const stored = await waitFor(
      async () => {
        const row = await w.walletDb('reservations').where({ id: r.id }).first();
        return row.status === 'expired' ? row : undefined;
      },
      { timeoutMs: 5000, intervalMs: 20, what: 'the hold written expired' },
    );
    expect(new Date(stored.ended_at).getTime() - expiresAt).toBeLessThan(1000);
    expect((await w.stack.api.get(`/v1/reservations/${r.id}`)).body.status).toBe('expired');
    expect((await w.stack.api.get(`/v1/reservations?customer_id=${customerId}&status=expired`)).body.items.map((i: { id: string }) => i.id)).toEqual([r.id]);
    for (const path of ['commit', 'release']) {
      const res = await w.stack.api.post(`/v1/reservations/${r.id}/${path}`, { ...(path === 'commit' ? { credits: '1' } : {}) });
      expect([res.status, res.body.error.details]).toEqual([400, expect.objectContaining({ field: 'status', status: 'expired' })]);
    }
    expect(await balance(walletId)).toMatchObject({ credit_balance: '10', credits_held: '0', credits_available: '10' });
    await waitFor(async () => (await w.walletDb('outbox').where({ message_key: walletId }).whereRaw(`headers->>'event-type' = 'reservation.expired'`)).length === 1, {
      what: 'reservation.expired in the outbox',
    });
  });

  it('commits and releases racing the expiry job: each hold ends once, committed ones are debited once, nothing is lost', async () => {
    const { id: walletId, customerId } = await w.wallet('100');
    const holds = await Promise.all(Array.from({ length: 30 }, () => w.reserve({ customer_id: customerId, credits: '2', expires_in: 1 })));
    expect(holds.every((h) => h.status === 201)).toBe(true);
    // Fire the calls around the moment the holds expire (each expires_at is 1 s after its creation).
    const latest = Math.max(...holds.map((h) => Date.parse(h.body.expires_at)));
    await new Promise((r) => setTimeout(r, Math.max(0, latest - Date.now() - 150)));
    const calls = await Promise.all(
      holds.map((h, i) =>
        i % 2 === 0 ? w.stack.api.post(`/v1/reservations/${h.body.id}/commit`, { credits: '1.5' }) : w.stack.api.post(`/v1/reservations/${h.body.id}/release`, {}),
      ),
    );
    for (const c of calls) {
      if (c.status === 200) expect(['committed', 'released']).toContain(c.body.status);
      else expect([c.status, c.body.error.details.field, c.body.error.details.status]).toEqual([400, 'status', 'expired']);
    }
    await waitFor(async () => (await w.walletDb('reservations').where({ wallet_id: walletId, status: 'held' })).length === 0, { timeoutMs: 5000, what: 'no hold left' });
    const rows = await w.walletDb('reservations').where({ wallet_id: walletId });
    const committed = rows.filter((r: { status: string }) => r.status === 'committed');
    const answeredCommitted = calls.filter((c) => c.status === 200 && c.body.status === 'committed').map((c) => c.body.id).sort();
    expect(committed.map((r: { id: string }) => r.id).sort()).toEqual(answeredCommitted);
    const answeredReleased = calls.filter((c) => c.status === 200 && c.body.status === 'released').length;
    expect(rows.filter((r: { status: string }) => r.status === 'released').length).toBe(answeredReleased);
    expect(rows.filter((r: { status: string }) => r.status === 'expired').length).toBe(30 - committed.length - answeredReleased);
    const debits = await w.walletDb('transactions').where({ wallet_id: walletId, type: 'DEBIT', transaction_reason: 'RESERVATION_CAPTURE' });
    expect(debits.map((d: { idempotency_key: string }) => d.idempotency_key).sort()).toEqual(answeredCommitted.map((id: string) => `reservation:${id}`).sort());
    const spent = new Exact('1.5').times(committed.length);
    expect(await balance(walletId)).toMatchObject({ credit_balance: new Exact(100).minus(spent).toString(), credits_held: '0' });
  });

  it('a commit and a release of one hold at once: exactly one wins, the other is 400 status', async () => {
    const { id: walletId, customerId } = await w.wallet('10');
    for (let round = 0; round < 5; round++) {
      const r = (await w.reserve({ customer_id: customerId, credits: '1' })).body;
      const [commit, release] = await Promise.all([
        w.stack.api.post(`/v1/reservations/${r.id}/commit`, { credits: '1' }),
        w.stack.api.post(`/v1/reservations/${r.id}/release`, {}),
      ]);
      expect([commit.status, release.status].sort()).toEqual([200, 400]);
    }
    const ended = await w.walletDb('reservations').where({ wallet_id: walletId });
    const committed = ended.filter((r: { status: string }) => r.status === 'committed').length;
    expect((await balance(walletId)).credit_balance).toBe(String(10 - committed));
  });
});
