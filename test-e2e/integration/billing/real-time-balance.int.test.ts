import { createDb, type Db } from '@billstream/db';
import { waitFor } from '@billstream/testing';
import { startIntegrationStack, type IntegrationStack } from '../../support/stack';
import { usagePrice } from './prices';

/**
 * Real-time balance (docs/api/wallets.md#balance, ADR 0024) as a client meets it: through the
 * gateway on the whole app with real Postgres and Kafka, and in the embedded default's
 * in-process bus. Usage price: 0.5 usd per call. The sweep is off: what moves the balances here
 * is the usage-recorded notification after the aggregator stored the events.
 */
const ENV = { BILLING_INTERVAL_MS: '0', WALLET_EXPIRY_INTERVAL_MS: '0', UNBILLED_SWEEP_MS: '0', UNBILLED_DEBOUNCE_MS: '250' };
const FRESH_MS = 2000;

interface Balance {
  balance: string;
  credit_balance: string;
  real_time_balance: string;
  real_time_credit_balance: string;
  unbilled_usage: number;
  as_of: string | null;
}

function suite(name: string, inProcessBus: boolean): void {
  describe(name, () => {
    let stack: IntegrationStack;
    let walletDb: Db;
    let meterId: string;
    let planId: string;
    let n = 0;

    beforeAll(async () => {
      stack = await startIntegrationStack({ inProcessBus, extra: { env: ENV } });
      walletDb = createDb({ databaseUrl: stack.database.url, schema: 'wallet', poolMax: 2 });
      meterId = (await stack.api.post('/v1/meters', { name: 'calls', event_name: 'api_call', aggregation: { type: 'COUNT' } })).body.id;
      planId = (await stack.api.post('/v1/plans', { name: 'Usage', prices: [usagePrice(meterId)] })).body.id;
    });
    afterAll(async () => {
      await walletDb?.destroy();
      await stack?.stop();
    });

    const realTime = async (walletId: string): Promise<Balance> => {
      const res = await stack.api.get(`/v1/wallets/${walletId}/balance?include_real_time_balance=true`);
      expect(res.status).toBe(200);
      return res.body as Balance;
    };
    async function customer(externalId: string): Promise<string> {
      const res = await stack.api.post('/v1/customers', { external_customer_id: externalId });
      expect(res.status).toBe(201);
      return res.body.id;
    }
    async function wallet(customerId: string, credits: string, extra: Record<string, unknown> = {}): Promise<string> {
      const res = await stack.api.post('/v1/wallets', { customer_id: customerId, currency: 'usd', initial_credits_to_load: credits, ...extra });
      expect(res.status).toBe(201);
      return res.body.id;
    }
    async function subscribe(customerId: string, startDate?: string): Promise<string> {
      const res = await stack.api.post('/v1/subscriptions', { customer_id: customerId, plan_id: planId, ...(startDate ? { start_date: startDate } : {}) });
      expect(res.status).toBe(201);
      return res.body.id;
    }
    /** Sends `count` calls; answers when the gateway accepted them (202). */
    async function ingest(externalId: string, count: number, at = new Date().toISOString()): Promise<number> {
      const events = Array.from({ length: count }, () => ({ event_name: 'api_call', external_customer_id: externalId, timestamp: at, event_id: `rtb-${(n += 1)}-${Date.now()}` }));
      const res = await stack.api.post('/v1/events/bulk', { events });
      expect(res.status).toBe(202);
      return Date.now();
    }
    /** Milliseconds from `acceptedAt` until the real-time balance shows `expected`. */
    async function seen(walletId: string, expected: string, acceptedAt: number): Promise<number> {
      let last: Balance | undefined;
      await waitFor(
        async () => {
          last = await realTime(walletId);
          return last.real_time_balance === expected;
        },
        { timeoutMs: 15_000, intervalMs: 20, what: `real_time_balance ${expected} (last ${JSON.stringify(last)})` },
      );
      return Date.now() - acceptedAt;
    }
    const ongoingEvents = async (walletId: string) =>
      (await walletDb('outbox').where({ message_key: walletId }).orderBy('seq').select('value'))
        .map((r: { value: string }) => JSON.parse(r.value) as { type: string; payload: { alert: { state: string; balance: string } } })
        .filter((e) => e.type.startsWith('wallet.ongoing_balance.'))
        .map((e) => `${e.type}:${e.payload.alert.state}:${e.payload.alert.balance}`);

    it('takes accepted usage off the real-time balance within 2 s, with unbilled_usage and as_of', async () => {
      const c = await customer(`rtb-a-${inProcessBus}`);
      const w = await wallet(c, '20');
      await subscribe(c);
      const before = await realTime(w);
      expect(before).toMatchObject({ balance: '20', real_time_balance: '20', unbilled_usage: 0 });

      const accepted = await ingest(`rtb-a-${inProcessBus}`, 10);
      const ms = await seen(w, '15', accepted);
      expect(ms).toBeLessThan(FRESH_MS);
      const after = await realTime(w);
      expect(after).toMatchObject({ balance: '20', credit_balance: '20', real_time_balance: '15', real_time_credit_balance: '15', unbilled_usage: 500 });
      expect(new Date(after.as_of!).getTime()).toBeGreaterThanOrEqual(accepted - 1000);
      // Without the flag: the spec's fields only.
      const plain = (await stack.api.get(`/v1/wallets/${w}/balance`)).body;
      expect(plain).not.toHaveProperty('unbilled_usage');
      expect(plain).not.toHaveProperty('real_time_balance');
      // The wallet's internal endpoint is not routed by the gateway: a client cannot set unbilled usage.
      const internal = await stack.api.post('/internal/v1/unbilled-usage', { as_of: new Date(Date.now() + 60_000).toISOString(), customers: [{ customer_id: c, amounts: [] }] });
      expect(internal.status).toBe(404);
      expect(await realTime(w)).toMatchObject({ real_time_balance: '15', unbilled_usage: 500 });
    });

    it('publishes wallet.ongoing_balance.dropped once when the real-time credit balance crosses the threshold, and recovered after a top-up', async () => {
      const ext = `rtb-alert-${inProcessBus}`;
      const c = await customer(ext);
      const w = await wallet(c, '20', { alert_settings: { alert_enabled: true, warning: { threshold: '10', condition: 'below' } } });
      await subscribe(c);
      await seen(w, '17', await ingest(ext, 6)); // 20 - 3: ok
      await seen(w, '9', await ingest(ext, 16)); // 20 - 11: warning
      await seen(w, '8', await ingest(ext, 2)); // 20 - 12: still warning, nothing new
      expect(await ongoingEvents(w)).toEqual(['wallet.ongoing_balance.dropped:warning:9']);
      // The credit balance itself never moved: no credit_balance alert.
      expect((await stack.api.get(`/v1/wallets/${w}`)).body.alert_state).toBe('ok');
      const topup = await stack.api.post(`/v1/wallets/${w}/topup`, { credits_to_add: '10' });
      expect(topup.status).toBe(201);
      expect((await realTime(w)).real_time_balance).toBe('18');
      expect(await ongoingEvents(w)).toEqual(['wallet.ongoing_balance.dropped:warning:9', 'wallet.ongoing_balance.recovered:ok:18']);
    });

    it('leaves a wallet of another currency, a wallet that does not pay USAGE and a POST_PAID wallet alone', async () => {
      const ext = `rtb-other-${inProcessBus}`;
      const c = await customer(ext);
      const eur = await wallet(c, '20', { currency: 'eur' });
      const postpaid = await wallet(c, '20', { wallet_type: 'POST_PAID' });
      const ext2 = `rtb-fixed-${inProcessBus}`;
      const c2 = await customer(ext2);
      const fixedOnly = await wallet(c2, '20', { config: { allowed_price_types: ['FIXED'] } });
      const usd = await wallet(c2, '5', { currency: 'usd', wallet_type: 'POST_PAID' });
      await subscribe(c);
      await subscribe(c2);
      await ingest(ext, 10);
      await ingest(ext2, 10);
      // Billing computed both customers' 5 usd (the wallet service holds them), yet none of these wallets counts them.
      await waitFor(async () => (await walletDb('unbilled_usage').whereIn('customer_id', [c, c2]).where({ currency: 'usd', amount: 500 })).length === 2, {
        timeoutMs: 15_000,
        what: 'unbilled usage of both customers',
      });
      for (const id of [eur, postpaid, fixedOnly, usd]) {
        const b = await realTime(id);
        expect(b).toMatchObject({ unbilled_usage: 0 });
        expect(b.real_time_balance).toBe(b.balance);
      }
    });

    it('counts an ended period once: as its draft until the wallet pays it at finalization, never twice', async () => {
      const ext = `rtb-period-${inProcessBus}`;
      const c = await customer(ext);
      const w = await wallet(c, '100');
      const now = new Date();
      const previous = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1));
      // 10 calls in the previous month, stored before the subscription that bills them exists.
      await ingest(ext, 10, new Date(previous.getTime() + 86_400_000).toISOString());
      await waitFor(
        async () => {
          const res = await stack.api.post(`/v1/meters/${meterId}/usage`, { external_customer_id: ext, start_time: previous.toISOString(), end_time: now.toISOString() });
          return res.body.value === '10';
        },
        { timeoutMs: 20_000, what: 'previous month usage' },
      );
      // Backdated: the previous month closes at once into a draft of 5 usd; 2 calls now: 1 usd open.
      const sub = await subscribe(c, previous.toISOString());
      const drafts = (await stack.api.get(`/v1/invoices?subscription_id=${sub}`)).body.items as Array<{ status: string; subtotal: number }>;
      expect(drafts.map((i) => [i.status, i.subtotal])).toEqual([['draft', 500]]);
      await seen(w, '94', await ingest(ext, 2));
      expect(await realTime(w)).toMatchObject({ credit_balance: '100', unbilled_usage: 600 });

      // Finalization: the wallet pays the draft's 5 usd; in the same wallet transaction it stops being unbilled.
      const cron = await stack.api.post('/v1/cron/bill-subscriptions', {});
      expect(cron.status).toBe(200);
      expect(cron.body.invoices_finalized).toBe(1);
      expect(await realTime(w)).toMatchObject({ balance: '95', credit_balance: '95', real_time_balance: '94', unbilled_usage: 100 });
      // The next recomputation agrees (the draft is no longer a draft).
      await seen(w, '93.5', await ingest(ext, 1));
      expect(await realTime(w)).toMatchObject({ balance: '95', unbilled_usage: 150 });
    });
  });
}

suite('real-time balance through the gateway (real Postgres and Kafka)', false);
suite('real-time balance in the embedded default (in-process bus)', true);
