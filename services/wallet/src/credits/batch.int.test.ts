import { listen, type Listening } from '@billstream/http';
import { newUlid } from '@billstream/ids';
import { ApiClient } from '@billstream/testing';
import { ENVIRONMENT, INTERNAL_TOKEN, META, TENANT, startLedgerHarness, type LedgerHarness } from '../testing/harness';
import { assertLedgerAddsUp } from '../testing/invariants';

/**
 * POST /internal/v1/credits/batch (ADR 0048): up to 100 credits by idempotency key in one wallet
 * transaction, each answered as POST /internal/v1/credits answers it, or refused on its own;
 * exactly once per key under repeats and concurrent batches.
 */

const HEADERS = { 'x-internal-token': INTERNAL_TOKEN, 'x-tenant-id': TENANT, 'x-environment-id': ENVIRONMENT };
const BATCH = '/internal/v1/credits/batch';
const SINGLE = '/internal/v1/credits';
const DAY = 86_400_000;

interface Credit {
  customer_id: string;
  currency: string;
  credits?: string;
  amount?: string;
  transaction_reason: string;
  expiry_date: string | null;
  priority: number | null;
  description: string | null;
  idempotency_key: string;
  wallet: { conversion_rate: string; allowed_price_types: string[] };
}

interface Outcome {
  status: 'credited' | 'refused';
  idempotency_key: string;
  wallet_id?: string;
  wallet_created?: boolean;
  replayed?: boolean;
  transaction?: { id: string; credit_amount: string; transaction_reason: string; idempotency_key: string };
  reason?: string;
  field?: string;
}

describe('batch credits by key: POST /internal/v1/credits/batch (real Postgres)', () => {
  let h: LedgerHarness;
  let http: Listening;
  let api: ApiClient;

  beforeAll(async () => {
    h = await startLedgerHarness();
    http = await listen(h.service.app, 0, '127.0.0.1');
    api = new ApiClient(http.url);
  });
  afterAll(async () => {
    await http?.close();
    await h?.stop();
  });

  const future = () => new Date(h.clock.now().getTime() + 30 * DAY).toISOString();
  const grant = (customerId: string, overrides: Partial<Credit> = {}): Credit => ({
    customer_id: customerId,
    currency: 'usd',
    credits: '10',
    transaction_reason: 'SUBSCRIPTION_CREDIT_GRANT',
    expiry_date: null,
    priority: 1,
    description: 'grant',
    idempotency_key: `cgrant:${newUlid()}`,
    wallet: { conversion_rate: '1', allowed_price_types: ['USAGE'] },
    ...overrides,
  });
  const batch = (credits: unknown[]) => api.post(BATCH, { credits }, HEADERS);
  const results = (res: { status: number; body: { results: Outcome[] } }): Outcome[] => {
    expect(res.status).toBe(200);
    return res.body.results;
  };
  const prepaidOf = (customerId: string) => h.db('wallets').where({ customer_id: customerId, wallet_type: 'PRE_PAID' }).orderBy('created_at');
  const count = async (table: string, where: Record<string, unknown> = {}) => Number((await h.db(table).where(where).count({ n: '*' }))[0].n);
  /** What a bad batch must leave as it was. */
  const snapshot = async () => ({ wallets: await count('wallets'), transactions: await count('transactions'), outbox: await count('outbox'), keys: await count('customer_credits') });
  const checkLedgers = async (customerIds: string[]) => {
    for (const c of customerIds) for (const w of await prepaidOf(c)) await assertLedgerAddsUp(h.db, w.id, h.clock.now());
  };

  it('credits existing and missing wallets in one call and refuses expired credits, gone customers and frozen wallets item by item', async () => {
    const withWallet = await h.customer();
    const existing = await h.wallet({ customerId: withWallet });
    const without = await h.customer();
    const frozen = await h.customer();
    const frozenWallet = await h.wallet({ customerId: frozen });
    await h.service.wallets.update(META, frozenWallet.id, { walletStatus: 'frozen' });
    const gone = await h.customer();
    await h.db('customers').where({ id: gone }).update({ deleted_at: h.clock.now() });
    const unknown = `cust_unknown_${newUlid()}`;
    const credits = [
      grant(withWallet, { expiry_date: future() }),
      grant(without, { wallet: { conversion_rate: '2', allowed_price_types: ['USAGE'] } }),
      // A second credit of the wallet the batch creates: it goes to that wallet, at its rate.
      grant(without, { credits: undefined, amount: '5', transaction_reason: 'CREDIT_NOTE', wallet: { conversion_rate: '4', allowed_price_types: ['ALL'] } }),
      grant(withWallet, { expiry_date: new Date(h.clock.now().getTime() - 1000).toISOString() }),
      grant(gone),
      grant(unknown),
      grant(frozen),
    ];
    const out = results(await batch(credits));
    expect(out.map((o) => [o.idempotency_key, o.status, o.reason ?? null, o.field ?? null])).toEqual([
      [credits[0].idempotency_key, 'credited', null, null],
      [credits[1].idempotency_key, 'credited', null, null],
      [credits[2].idempotency_key, 'credited', null, null],
      [credits[3].idempotency_key, 'refused', 'expired', 'expiry_date'],
      [credits[4].idempotency_key, 'refused', 'customer_deleted', 'customer_id'],
      [credits[5].idempotency_key, 'refused', 'customer_deleted', 'customer_id'],
      [credits[6].idempotency_key, 'refused', 'wallet_not_active', 'wallet_status'],
    ]);
    expect(out[0]).toMatchObject({ wallet_id: existing.id, wallet_created: false, replayed: false, transaction: { credit_amount: '10', transaction_reason: 'SUBSCRIPTION_CREDIT_GRANT', idempotency_key: credits[0].idempotency_key } });
    const [made] = await prepaidOf(without);
    expect(await prepaidOf(without)).toHaveLength(1);
    expect(made).toMatchObject({ conversion_rate: '2', credit_balance: '12.5' });
    expect(out[1]).toMatchObject({ wallet_id: made.id, wallet_created: true, transaction: { credit_amount: '10' } });
    // 5 of money at the created wallet's rate 2 (not the item's 4): 2.5 credits.
    expect(out[2]).toMatchObject({ wallet_id: made.id, wallet_created: false, transaction: { credit_amount: '2.5', transaction_reason: 'CREDIT_NOTE' } });
    const events = (await h.events(made.id)).map((e) => e.type);
    expect(events).toEqual(['wallet.created', 'wallet.transaction.created', 'wallet.transaction.created']);
    // Only the credits are stored under their keys; the refused keys hold nothing and can be credited later.
    const stored = await h.db('customer_credits').whereIn('idempotency_key', credits.map((c) => c.idempotency_key)).orderBy('idempotency_key');
    expect(stored.map((r) => r.idempotency_key).sort()).toEqual(credits.slice(0, 3).map((c) => c.idempotency_key).sort());
    expect(await count('wallets', { customer_id: gone })).toBe(0);
    expect((await h.db('wallets').where({ id: frozenWallet.id }).first()).credit_balance).toBe('0');
    await h.service.wallets.update(META, frozenWallet.id, { walletStatus: 'active' });
    const later = results(await batch([credits[6]]));
    expect(later[0]).toMatchObject({ status: 'credited', wallet_id: frozenWallet.id, wallet_created: false });
    await checkLedgers([withWallet, without, frozen]);
  });

  it('answers a stored key with its stored credit, in a batch or alone, whatever happened since', async () => {
    const customer = await h.customer();
    const other = await h.customer();
    const credits = [grant(customer, { expiry_date: future() }), grant(other)];
    const first = results(await batch(credits));
    expect(first.map((o) => [o.status, o.wallet_created, o.replayed])).toEqual([
      ['credited', true, false],
      ['credited', true, false],
    ]);
    const before = await snapshot();
    const again = results(await batch(credits));
    expect(again.map((o) => [o.status, o.wallet_id, o.transaction!.id, o.wallet_created, o.replayed])).toEqual(
      first.map((o) => ['credited', o.wallet_id, o.transaction!.id, true, true]),
    );
    // The single endpoint answers the same credit for the same key, and a batch answers a single call's.
    const single = await api.post(SINGLE, credits[1], HEADERS);
    expect([single.status, single.body.transaction.id, single.body.replayed]).toEqual([201, first[1].transaction!.id, true]);
    const alone = grant(other);
    const byCall = await api.post(SINGLE, alone, HEADERS);
    expect(byCall.status).toBe(201);
    const mixed = results(await batch([alone, credits[0]]));
    expect(mixed.map((o) => [o.transaction!.id, o.replayed])).toEqual([
      [byCall.body.transaction.id, true],
      [first[0].transaction!.id, true],
    ]);
    // A stored key is answered before any check: the expiry passed and the customer is gone since.
    h.clock.advance(31 * DAY);
    await h.db('customers').where({ id: customer }).update({ deleted_at: h.clock.now() });
    const late = results(await batch([credits[0]]));
    expect([late[0].status, late[0].transaction!.id]).toEqual(['credited', first[0].transaction!.id]);
    expect(await snapshot()).toEqual({ ...before, transactions: before.transactions + 1, outbox: before.outbox + 1, keys: before.keys + 1 });
    await checkLedgers([customer, other]);
  });

  it('credits each key once under concurrent identical and overlapping batches', async () => {
    const customers = await Promise.all(Array.from({ length: 8 }, () => h.customer()));
    // Half have a wallet; the others' wallets are made by whichever batch comes first.
    for (const c of customers.slice(0, 4)) await h.wallet({ customerId: c });
    const credits = customers.flatMap((c) => [grant(c), grant(c, { credits: '2.5' })]);
    const reversed = [...credits].reverse();
    const calls = await Promise.all([
      ...Array.from({ length: 4 }, () => batch(credits)),
      ...Array.from({ length: 2 }, () => batch(reversed)),
      batch(credits.slice(3, 11)),
      ...credits.slice(0, 4).map((c) => api.post(SINGLE, c, HEADERS)),
    ]);
    const byKey = new Map<string, Set<string>>();
    for (const res of calls) {
      expect(res.status).toBeLessThan(300);
      const outcomes: Outcome[] = res.body.results ?? [{ status: 'credited', idempotency_key: '', ...res.body }];
      for (const o of outcomes) {
        expect(o.status).toBe('credited');
        const key = o.transaction!.idempotency_key;
        byKey.set(key, (byKey.get(key) ?? new Set()).add(o.transaction!.id));
      }
    }
    expect([...byKey.values()].map((ids) => ids.size)).toEqual(credits.map(() => 1));
    for (const c of customers) {
      const wallets = await prepaidOf(c);
      expect(wallets).toHaveLength(1);
      expect(wallets[0].credit_balance).toBe('12.5');
      expect(await count('transactions', { wallet_id: wallets[0].id, transaction_reason: 'SUBSCRIPTION_CREDIT_GRANT' })).toBe(2);
    }
    expect(await count('customer_credits', { customer_id: customers[0] })).toBe(2);
    // One wallet.created per made wallet, whatever the number of batches.
    for (const c of customers.slice(4)) expect((await h.events((await prepaidOf(c))[0].id, 'wallet.created')).length).toBe(1);
    await checkLedgers(customers);
  });

  it('refuses the whole batch with 409 naming the item when a key was stored with another request, and writes nothing', async () => {
    const customer = await h.customer();
    const stored = grant(customer);
    results(await batch([stored]));
    const fresh = grant(await h.customer());
    const before = await snapshot();
    const res = await batch([fresh, { ...stored, credits: '11' }]);
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({ internal_error: 'idempotency_conflict', details: { field: 'credits.1.idempotency_key' } });
    expect(await snapshot()).toEqual(before);
    expect(await count('customer_credits', { idempotency_key: fresh.idempotency_key })).toBe(0);
  });

  it('refuses bad bodies with 400 validation_error naming the field, and writes nothing', async () => {
    const customer = await h.customer();
    const good = grant(customer);
    const before = await snapshot();
    const cases: Array<[unknown, string]> = [
      [{}, 'credits'],
      [{ credits: [] }, 'credits'],
      [{ credits: Array.from({ length: 101 }, () => grant(customer)) }, 'credits'],
      [{ credits: [good, { ...grant(customer), idempotency_key: good.idempotency_key }] }, 'credits.1.idempotency_key'],
      [{ credits: [good, { ...grant(customer), currency: 'usdx' }] }, 'credits.1.currency'],
      [{ credits: [good, { ...grant(customer), amount: '5' }] }, 'credits.1.credits'],
      [{ credits: [{ ...good, credits: '0' }] }, 'credits.0.credits'],
      [{ credits: [{ ...good, expiry_date: 'tomorrow' }] }, 'credits.0.expiry_date'],
      [{ credits: [{ ...good, transaction_reason: 'FREE' }] }, 'credits.0.transaction_reason'],
      [{ credits: [{ ...good, extra: 1 }] }, 'credits.0.extra'],
      [{ credits: [good], extra: 1 }, 'extra'],
    ];
    for (const [body, field] of cases) {
      const res = await api.post(BATCH, body, HEADERS);
      expect([field, res.status, res.body.error.internal_error, res.body.error.details.field]).toEqual([field, 400, 'validation_error', field]);
    }
    expect((await api.post(BATCH, '{"credits": [', HEADERS)).status).toBe(400);
    const noToken = await api.post(BATCH, { credits: [good] }, { 'x-tenant-id': TENANT, 'x-environment-id': ENVIRONMENT });
    expect(noToken.status).toBe(401);
    expect(await snapshot()).toEqual(before);
  });
});
