import { waitFor } from '@billstream/testing';
import { startReservationWorld, type ReservationWorld } from './reservations-support';

describe('reservations of PRE_PAID wallets through the gateway (real Postgres and Kafka)', () => {
  let w: ReservationWorld;
  beforeAll(async () => {
    w = await startReservationWorld('resv-api');
  });
  afterEach(async () => {
    await w.assertLedgers();
  });
  afterAll(async () => {
    await w?.stop();
  });

  const count = async (walletId: string) => Number((await w.walletDb('reservations').where({ wallet_id: walletId }).count({ n: '*' }))[0]!.n);
  const balance = async (walletId: string) => (await w.stack.api.get(`/v1/wallets/${walletId}/balance?include_real_time_balance=true`)).body;

  it('answers 400 naming each bad field, and writes nothing', async () => {
    const { id: walletId, customerId } = await w.wallet('10');
    const ok = { customer_id: customerId, currency: 'usd', credits: '1', idempotency_key: 'bad-1' };
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ...ok, customer_id: undefined }, 'customer_id'],
      [{ ...ok, external_customer_id: 'x' }, 'customer_id'],
      [{ ...ok, currency: 'dollars' }, 'currency'],
      [{ ...ok, credits: undefined }, 'credits'],
      [{ ...ok, amount: '1' }, 'credits'],
      [{ ...ok, credits: '-1' }, 'credits'],
      [{ ...ok, credits: '0' }, 'credits'],
      [{ ...ok, credits: 2 }, 'credits'],
      [{ ...ok, expires_in: 0 }, 'expires_in'],
      [{ ...ok, expires_in: 86_401 }, 'expires_in'],
      [{ ...ok, expires_in: 1.5 }, 'expires_in'],
      [{ ...ok, idempotency_key: undefined }, 'idempotency_key'],
      [{ ...ok, allow_overage: 'yes' }, 'allow_overage'],
      [{ ...ok, color: 'red' }, 'color'],
    ];
    for (const [body, field] of cases) {
      const res = await w.stack.api.post('/v1/reservations', body);
      expect([res.status, res.body.error.internal_error, res.body.error.details.field]).toEqual([400, 'validation_error', field]);
    }
    const held = await w.reserve({ customer_id: customerId, credits: '2' });
    expect(held.status).toBe(201);
    for (const [body, field] of [
      [{ credits: '-1' }, 'credits'],
      [{}, 'credits'],
      // A commit is by credits, quantity or event: one of them; an event is checked as POST /v1/events checks it.
      [{ credits: '1', event: { event_name: 'tokens', external_customer_id: 'c', timestamp: new Date().toISOString() } }, 'event'],
      [{ event: { event_name: 'tokens', properties: { n: 1 } } }, 'event.external_customer_id'],
      [{ quantity: '1' }, 'quantity'],
      [{ credits: '1', color: 'red' }, 'color'],
    ] as const) {
      const res = await w.stack.api.post(`/v1/reservations/${held.body.id}/commit`, body);
      expect([res.status, res.body.error.internal_error, res.body.error.details.field]).toEqual([400, 'validation_error', field]);
    }
    expect((await w.stack.api.post('/v1/reservations/resv_01HZZZZZZZZZZZZZZZZZZZZZZZ/commit', { credits: '1' })).status).toBe(404);
    expect((await w.stack.api.post('/v1/reservations/resv_01HZZZZZZZZZZZZZZZZZZZZZZZ/release', {})).status).toBe(404);
    expect((await w.stack.api.get('/v1/reservations/resv_01HZZZZZZZZZZZZZZZZZZZZZZZ')).status).toBe(404);
    expect((await w.stack.api.get('/v1/reservations?status=live')).body.error.details.field).toBe('status');
    expect(await count(walletId)).toBe(1);
    expect((await balance(walletId)).credit_balance).toBe('10');
  });

  it('answers 404 for an unknown customer and 400 currency without an active PRE_PAID wallet of the currency', async () => {
    const unknown = await w.reserve({ customer_id: 'cust_01HZZZZZZZZZZZZZZZZZZZZZZZ', credits: '1' });
    expect([unknown.status, unknown.body.error.details.field]).toEqual([404, 'customer_id']);
    const unknownExternal = await w.reserve({ external_customer_id: 'nobody-at-all', credits: '1' });
    expect([unknownExternal.status, unknownExternal.body.error.details.field]).toEqual([404, 'external_customer_id']);
    const { id: walletId, customerId } = await w.wallet('10');
    const eur = await w.reserve({ customer_id: customerId, currency: 'EUR', credits: '1' });
    expect([eur.status, eur.body.error.internal_error, eur.body.error.details.field]).toEqual([400, 'validation_error', 'currency']);
    const c = await w.customer();
    expect((await w.stack.api.post('/v1/wallets', { customer_id: c.id, currency: 'usd', wallet_type: 'POST_PAID' })).status).toBe(201);
    expect((await w.reserve({ customer_id: c.id, credits: '1' })).body.error.details.field).toBe('currency');
    expect((await w.stack.api.patch(`/v1/wallets/${walletId}`, { wallet_status: 'frozen' })).status).toBe(200);
    expect((await w.reserve({ customer_id: customerId, credits: '1' })).body.error.details.field).toBe('currency');
    expect(await count(walletId)).toBe(0);
  });

  it('holds by credits or by amount (external id too), shows the hold on the wallet and its balance, and answers 402 with details.available', async () => {
    const c = await w.customer();
    const made = await w.stack.api.post('/v1/wallets', { customer_id: c.id, currency: 'usd', conversion_rate: '0.5', initial_credits_to_load: '10' });
    const walletId = made.body.id as string;
    const first = await w.reserve({ external_customer_id: c.external, credits: '6.5', expires_in: 60, metadata: { call: 'gpt' } });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({
      id: expect.stringMatching(/^resv_/),
      status: 'held',
      customer_id: c.id,
      wallet_id: walletId,
      currency: 'usd',
      credits_held: '6.5',
      credits_committed: null,
      transaction_id: null,
      metadata: { call: 'gpt' },
      ended_at: null,
    });
    expect(Date.parse(first.body.expires_at) - Date.parse(first.body.created_at)).toBe(60_000);
    // 1 USD at 0.5 USD a credit is 2 credits.
    const byAmount = await w.reserve({ customer_id: c.id, amount: '1' });
    expect([byAmount.status, byAmount.body.credits_held]).toEqual([201, '2']);
    const short = await w.reserve({ customer_id: c.id, credits: '1.6' });
    expect(short.status).toBe(402);
    expect(short.body.error).toMatchObject({ internal_error: 'insufficient_credits', details: { available: '1.5' } });
    expect(await count(walletId)).toBe(2);
    expect((await w.stack.api.get(`/v1/wallets/${walletId}`)).body).toMatchObject({ credit_balance: '10', credits_held: '8.5', credits_available: '1.5' });
    expect(await balance(walletId)).toMatchObject({ credit_balance: '10', real_time_credit_balance: '10', credits_held: '8.5', credits_available: '1.5' });
    const listed = (await w.stack.api.get(`/v1/customers/${c.id}/wallets`)).body.items;
    expect(listed).toEqual([expect.objectContaining({ id: walletId, credits_held: '8.5', credits_available: '1.5' })]);
  });

  it('answers a retry of the key with the same reservation, and another body with 409 idempotency_conflict', async () => {
    const { id: walletId, customerId } = await w.wallet('10');
    const body = { customer_id: customerId, currency: 'usd', credits: '3', idempotency_key: `same-${walletId}` };
    const answers = await Promise.all([1, 2, 3, 4, 5].map(() => w.stack.api.post('/v1/reservations', body)));
    expect(answers.map((a) => a.status)).toEqual([201, 201, 201, 201, 201]);
    expect(new Set(answers.map((a) => a.body.id)).size).toBe(1);
    const other = await w.stack.api.post('/v1/reservations', { ...body, credits: '4' });
    expect([other.status, other.body.error.internal_error, other.body.error.details.field]).toEqual([409, 'idempotency_conflict', 'idempotency_key']);
    expect(await count(walletId)).toBe(1);
    expect((await balance(walletId)).credits_held).toBe('3');
  });

  it('commits one RESERVATION_CAPTURE debit and releases the rest; the same commit again is unchanged, another is 400 status', async () => {
    const { id: walletId, customerId } = await w.wallet('10');
    const held = (await w.reserve({ customer_id: customerId, credits: '5' })).body;
    const committed = await w.stack.api.post(`/v1/reservations/${held.id}/commit`, { credits: '3.25' });
    expect(committed.status).toBe(200);
    expect(committed.body).toMatchObject({ status: 'committed', credits_held: '5', credits_committed: '3.25', transaction_id: expect.any(String) });
    expect(committed.body.ended_at).not.toBeNull();
    const debits = (await w.stack.api.get(`/v1/wallets/${walletId}/transactions?type=DEBIT`)).body.items;
    expect(debits).toEqual([
      expect.objectContaining({ id: committed.body.transaction_id, credit_amount: '3.25', transaction_reason: 'RESERVATION_CAPTURE', idempotency_key: `reservation:${held.id}` }),
    ]);
    expect(await balance(walletId)).toMatchObject({ credit_balance: '6.75', credits_held: '0', credits_available: '6.75' });
    const again = await w.stack.api.post(`/v1/reservations/${held.id}/commit`, { credits: '3.25' });
    expect([again.status, again.body]).toEqual([200, committed.body]);
    const another = await w.stack.api.post(`/v1/reservations/${held.id}/commit`, { credits: '3' });
    expect([another.status, another.body.error.details.field]).toEqual([400, 'status']);
    const release = await w.stack.api.post(`/v1/reservations/${held.id}/release`, {});
    expect([release.status, release.body.error.details]).toEqual([400, expect.objectContaining({ field: 'status', status: 'committed' })]);
    // A commit of 0 debits nothing.
    const zero = (await w.reserve({ customer_id: customerId, credits: '1' })).body;
    const none = await w.stack.api.post(`/v1/reservations/${zero.id}/commit`, { credits: '0' });
    expect(none.body).toMatchObject({ status: 'committed', credits_committed: '0', transaction_id: null });
    expect((await balance(walletId)).credit_balance).toBe('6.75');
  });

  it('refuses a commit larger than the hold unless allow_overage, and then only when what is available covers it', async () => {
    const { id: walletId, customerId } = await w.wallet('10');
    const a = (await w.reserve({ customer_id: customerId, credits: '4' })).body;
    const b = (await w.reserve({ customer_id: customerId, credits: '3' })).body;
    const refused = await w.stack.api.post(`/v1/reservations/${a.id}/commit`, { credits: '5' });
    expect([refused.status, refused.body.error.details]).toEqual([400, expect.objectContaining({ field: 'credits', credits_held: '4' })]);
    // Available to a: 10 - 3 (b's hold) = 7.
    const tooMuch = await w.stack.api.post(`/v1/reservations/${a.id}/commit`, { credits: '7.01', allow_overage: true });
    expect([tooMuch.status, tooMuch.body.error.internal_error, tooMuch.body.error.details.available]).toEqual([402, 'insufficient_credits', '7']);
    const over = await w.stack.api.post(`/v1/reservations/${a.id}/commit`, { credits: '7', allow_overage: true });
    expect([over.status, over.body.status, over.body.credits_committed]).toEqual([200, 'committed', '7']);
    expect(await balance(walletId)).toMatchObject({ credit_balance: '3', credits_held: '3', credits_available: '0' });
    // The reservation's own allow_overage.
    const c = await w.wallet('10');
    const own = (await w.reserve({ customer_id: c.customerId, credits: '2', allow_overage: true })).body;
    expect((await w.stack.api.post(`/v1/reservations/${own.id}/commit`, { credits: '2.5' })).body).toMatchObject({ status: 'committed', credits_committed: '2.5' });
    expect((await w.stack.api.post(`/v1/reservations/${b.id}/release`, {})).body.status).toBe('released');
  });

  it('releases a hold whole (again: unchanged), lists by customer and status, and publishes reservation.* events', async () => {
    const { id: walletId, customerId } = await w.wallet('10');
    const r1 = (await w.reserve({ customer_id: customerId, credits: '4' })).body;
    const r2 = (await w.reserve({ customer_id: customerId, credits: '1' })).body;
    const released = await w.stack.api.post(`/v1/reservations/${r1.id}/release`, {});
    expect(released.body).toMatchObject({ status: 'released', credits_committed: null, transaction_id: null });
    const again = await w.stack.api.post(`/v1/reservations/${r1.id}/release`, {});
    expect([again.status, again.body]).toEqual([200, released.body]);
    expect((await w.stack.api.post(`/v1/reservations/${r1.id}/commit`, { credits: '1' })).body.error.details).toMatchObject({ field: 'status', status: 'released' });
    expect((await balance(walletId)).credits_held).toBe('1');
    const all = (await w.stack.api.get(`/v1/reservations?customer_id=${customerId}`)).body;
    expect([all.items.map((r: { id: string }) => r.id), all.pagination]).toEqual([[r2.id, r1.id], { total: 2, limit: 50, offset: 0 }]);
    const live = (await w.stack.api.get(`/v1/reservations?customer_id=${customerId}&status=held&limit=1`)).body;
    expect([live.items.map((r: { id: string }) => r.id), live.pagination.total]).toEqual([[r2.id], 1]);
    expect((await w.stack.api.get(`/v1/reservations/${r2.id}`)).body).toMatchObject({ id: r2.id, status: 'held' });
    await w.stack.api.post(`/v1/reservations/${r2.id}/commit`, { credits: '1' });
    await waitFor(async () => {
      const rows = await w.walletDb('outbox').where({ message_key: walletId }).select('value');
      const types = rows.map((r: { value: string }) => JSON.parse(r.value)).filter((e: { type: string }) => e.type.startsWith('reservation.'));
      const byType = types.map((e: { type: string; payload: { reservation: { id: string } } }) => `${e.type} ${e.payload.reservation.id}`).sort();
      return JSON.stringify(byType) === JSON.stringify([`reservation.committed ${r2.id}`, `reservation.created ${r1.id}`, `reservation.created ${r2.id}`, `reservation.released ${r1.id}`].sort());
    }, { timeoutMs: 5000, what: 'the reservation events in the outbox' });
  });

  it('checks reservations:read|write', async () => {
    const { customerId } = await w.wallet('10');
    const readOnly = w.stack.api.withKey(await w.stack.keyFor('tenant-a', 'production', ['reservations:read']));
    const write = await readOnly.post('/v1/reservations', { customer_id: customerId, currency: 'usd', credits: '1', idempotency_key: 'perm-1' });
    expect(write.status).toBe(403);
    expect((await readOnly.get(`/v1/reservations?customer_id=${customerId}`)).status).toBe(200);
  });
});
