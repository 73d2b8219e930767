import { listen, type Listening } from '@billstream/http';
import { newUlid } from '@billstream/ids';
import { Exact } from '@billstream/money';
import { ApiClient } from '@billstream/testing';
import { ENVIRONMENT, INTERNAL_TOKEN, TENANT, startLedgerHarness, type LedgerHarness } from '../testing/harness';
import { assertLedgerAddsUp } from '../testing/invariants';
import type { AlertSettings } from '../wallets/domain';

const D = (v: string) => new Exact(v);
const HEADERS = { 'x-internal-token': INTERNAL_TOKEN, 'x-tenant-id': TENANT, 'x-environment-id': ENVIRONMENT };
const alerts: AlertSettings = { alertEnabled: true, warning: { threshold: D('10'), condition: 'below' } };

describe('unbilled usage in the real-time balance (ADR 0024, real Postgres)', () => {
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

  type Amount = { currency: string; amount: number; invoices?: Array<{ invoice_id: string; amount: number }> };
  const report = (asOf: Date, customers: Array<{ customer_id: string; amounts: Amount[] }>) =>
    api.post('/internal/v1/unbilled-usage', { as_of: asOf.toISOString(), customers }, HEADERS);
  const balance = async (walletId: string) =>
    (await api.get(`/v1/wallets/${walletId}/balance?include_real_time_balance=true`, HEADERS)).body as Record<string, unknown>;
  const ongoing = async (walletId: string) =>
    (await h.events(walletId)).filter((e) => e.type.startsWith('wallet.ongoing_balance.')).map((e) => `${e.type.split('.').pop()}:${e.payload.alert.state}`);

  it('takes the usage off the real-time balances of a PRE_PAID wallet that allows USAGE, and never goes back to an older computation', async () => {
    const customer = await h.customer();
    const w = await h.wallet({ customerId: customer, initialCredits: D('50'), conversionRate: D('2') });
    const t0 = new Date();
    expect(await balance(w.id)).toMatchObject({ real_time_balance: '100', real_time_credit_balance: '50', unbilled_usage: 0, as_of: null });

    const res = await report(t0, [{ customer_id: customer, amounts: [{ currency: 'usd', amount: 1234 }] }]);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ wallets_updated: 1 });
    // 12.34 usd off 100 usd; 12.34 ÷ 2 = 6.17 credits off 50.
    expect(await balance(w.id)).toMatchObject({
      balance: '100',
      credit_balance: '50',
      real_time_balance: '87.66',
      real_time_credit_balance: '43.83',
      unbilled_usage: 1234,
      as_of: t0.toISOString(),
    });
    // An older computation arriving late changes nothing; a newer one replaces it.
    expect((await report(new Date(t0.getTime() - 1000), [{ customer_id: customer, amounts: [{ currency: 'usd', amount: 9999 }] }])).body).toEqual({ wallets_updated: 0 });
    expect(await balance(w.id)).toMatchObject({ unbilled_usage: 1234 });
    const t1 = new Date(t0.getTime() + 1000);
    await report(t1, [{ customer_id: customer, amounts: [{ currency: 'usd', amount: 100 }] }]);
    expect(await balance(w.id)).toMatchObject({ real_time_balance: '99', unbilled_usage: 100, as_of: t1.toISOString() });
    // Without the flag the balance has no real-time fields at all.
    const plain = (await api.get(`/v1/wallets/${w.id}/balance`, HEADERS)).body as Record<string, unknown>;
    expect(plain).not.toHaveProperty('unbilled_usage');
    expect(plain).not.toHaveProperty('as_of');
    await assertLedgerAddsUp(h.db, w.id, h.clock.now());
  });

  it('leaves other currencies, POST_PAID wallets and PRE_PAID wallets that do not allow USAGE alone; an unlisted currency has none', async () => {
    const customer = await h.customer();
    const fixedOnly = await h.wallet({ customerId: customer, initialCredits: D('10'), allowedPriceTypes: ['FIXED'] });
    const eur = await h.wallet({ customerId: customer, currency: 'eur', initialCredits: D('10') });
    const postpaid = await h.wallet({ customerId: customer, walletType: 'POST_PAID', initialCredits: D('10') });
    const res = await report(new Date(), [{ customer_id: customer, amounts: [{ currency: 'usd', amount: 500 }] }]);
    expect(res.body).toEqual({ wallets_updated: 1 }); // the eur wallet: set to 0
    for (const id of [fixedOnly.id, postpaid.id]) expect(await balance(id)).toMatchObject({ real_time_balance: '10', unbilled_usage: 0, as_of: null });
    expect(await balance(eur.id)).toMatchObject({ real_time_balance: '10', unbilled_usage: 0 });
    const all = await h.wallet({ customerId: (await h.customer()) as string, initialCredits: D('10'), allowedPriceTypes: ['ALL'] });
    await report(new Date(), [{ customer_id: all.customerId, amounts: [{ currency: 'usd', amount: 250 }] }]);
    expect(await balance(all.id)).toMatchObject({ real_time_balance: '7.5', unbilled_usage: 250 });
  });

  it('moves the ongoing alert state once per crossing and publishes it through the outbox', async () => {
    const customer = await h.customer();
    const w = await h.wallet({ customerId: customer, initialCredits: D('20'), alertSettings: alerts });
    let at = Date.now();
    const usage = (amount: number) => report(new Date((at += 1000)), [{ customer_id: customer, amounts: [{ currency: 'usd', amount }] }]);
    await usage(500); // 15 ok
    await usage(1100); // 9 warning: dropped
    await usage(1500); // 5 warning: nothing more
    expect(await ongoing(w.id)).toEqual(['dropped:warning']);
    expect((await h.service.wallets.get({ tenantId: TENANT, environmentId: ENVIRONMENT, actor: 'x' }, w.id)).alertState).toBe('ok');
    await h.service.entries.topup({ tenantId: TENANT, environmentId: ENVIRONMENT, actor: 'x' }, w.id, {
      credits: D('10'),
      reason: 'PURCHASED_CREDIT_DIRECT',
      expiryDate: null,
      priority: null,
      description: null,
      idempotencyKey: null,
    }); // 30 - 15 = 15: recovered
    expect(await ongoing(w.id)).toEqual(['dropped:warning', 'recovered:ok']);
    const dropped = (await h.events(w.id, 'wallet.ongoing_balance.dropped'))[0];
    expect(dropped.payload.alert).toMatchObject({ kind: 'ongoing_balance', balance: '9', threshold: '10' });
  });

  it('stops counting a draft invoice in the transaction that allocates it, and a late report cannot bring it back', async () => {
    const customer = await h.customer();
    const w = await h.wallet({ customerId: customer, initialCredits: D('100') });
    const invoice = `inv_${newUlid()}`;
    const before = new Date();
    await report(before, [{ customer_id: customer, amounts: [{ currency: 'usd', amount: 300, invoices: [{ invoice_id: invoice, amount: 2000 }] }] }]);
    expect(await balance(w.id)).toMatchObject({ real_time_balance: '77', unbilled_usage: 2300 });
    const alloc = await api.post(
      `/internal/v1/invoices/${invoice}/allocation`,
      { customer_id: customer, currency: 'usd', exponent: 2, lines: [{ id: 'u', price_type: 'USAGE', amount: 2000 }] },
      HEADERS,
    );
    expect(alloc.status).toBe(200);
    // 80 credits left; the invoice's 20 usd are debited, not also unbilled: 80 - 3 = 77, as before.
    expect(await balance(w.id)).toMatchObject({ credit_balance: '80', real_time_balance: '77', unbilled_usage: 300 });
    // A computation made before the allocation but arriving after it (newer as_of than stored) still lists the draft.
    await report(new Date(before.getTime() + 1), [{ customer_id: customer, amounts: [{ currency: 'usd', amount: 300, invoices: [{ invoice_id: invoice, amount: 2000 }] }] }]);
    expect(await balance(w.id)).toMatchObject({ real_time_balance: '77', unbilled_usage: 300 });
    await assertLedgerAddsUp(h.db, w.id, h.clock.now());
  });

  it('refuses bad bodies with 400 and writes nothing', async () => {
    const customer = await h.customer();
    const w = await h.wallet({ customerId: customer, initialCredits: D('10') });
    for (const body of [
      { as_of: 'yesterday', customers: [{ customer_id: customer, amounts: [] }] },
      { as_of: new Date().toISOString(), customers: [] },
      { as_of: new Date().toISOString(), customers: [{ customer_id: customer, amounts: [{ currency: 'usd', amount: -1 }] }] },
      { as_of: new Date().toISOString(), customers: [{ customer_id: customer, amounts: [{ currency: 'usd', amount: 1.5 }] }] },
    ]) {
      const res = await api.post('/internal/v1/unbilled-usage', body, HEADERS);
      expect(res.status).toBe(400);
      expect(res.body).toHaveProperty('error');
    }
    expect(await balance(w.id)).toMatchObject({ unbilled_usage: 0, as_of: null });
    const unauthenticated = await api.post('/internal/v1/unbilled-usage', { as_of: new Date().toISOString(), customers: [{ customer_id: customer, amounts: [] }] }, {});
    expect(unauthenticated.status).toBeGreaterThanOrEqual(400);
    expect(unauthenticated.status).toBeLessThan(500);
  });
});
