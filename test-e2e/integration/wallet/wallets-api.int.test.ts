import { waitFor } from '@billstream/testing';
import { startIntegrationStack, type IntegrationStack } from '../../support/stack';

describe('wallet API through the gateway (real Postgres and Kafka)', () => {
  let stack: IntegrationStack;
  let seq = 0;
  beforeAll(async () => {
    stack = await startIntegrationStack({ extra: { env: { WALLET_EXPIRY_INTERVAL_MS: '0' } } });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const newCustomer = async (): Promise<string> => {
    const res = await stack.api.post('/v1/customers', { external_customer_id: `wallet-api-${(seq += 1)}-${Date.now()}` });
    expect(res.status).toBe(201);
    return res.body.id;
  };
  const newWallet = async (body: Record<string, unknown> = {}) => {
    const res = await stack.api.post('/v1/wallets', { customer_id: await newCustomer(), currency: 'USD', ...body });
    expect(res.status).toBe(201);
    return res.body;
  };

  it('creates a wallet for a customer created a moment ago, with defaults and initial free credits', async () => {
    const customerId = await newCustomer();
    const res = await stack.api.post('/v1/wallets', {
      customer_id: customerId,
      currency: 'EUR',
      conversion_rate: '0.25',
      initial_credits_to_load: '100.5',
      description: 'main',
    });
    expect(res.status).toBe(201);
    expect(res.headers.etag).toMatch(/^"\d+"$/);
    expect(res.body).toMatchObject({
      id: expect.stringMatching(/^wallet_[0-9A-Z]{26}$/),
      customer_id: customerId,
      currency: 'eur',
      wallet_type: 'PRE_PAID',
      wallet_status: 'active',
      balance: '25.125',
      credit_balance: '100.5',
      conversion_rate: '0.25',
      topup_conversion_rate: '0.25',
      config: { allowed_price_types: ['USAGE'] },
      alert_state: 'ok',
      tenant_id: 'tenant-a',
      environment_id: 'production',
    });
    const entries = await stack.api.get(`/v1/wallets/${res.body.id}/transactions`);
    expect(entries.body.items).toEqual([
      expect.objectContaining({ type: 'CREDIT', transaction_reason: 'FREE_CREDIT_GRANT', transaction_status: 'COMPLETED', credit_amount: '100.5', amount: '25.125' }),
    ]);
    const duplicate = await stack.api.post('/v1/wallets', { customer_id: customerId, currency: 'eur' });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.error.internal_error).toBe('already_exists');
    const postpaid = await stack.api.post('/v1/wallets', { customer_id: customerId, currency: 'eur', wallet_type: 'POST_PAID' });
    expect(postpaid.status).toBe(201);
    expect(postpaid.body.config.allowed_price_types).toEqual(['ALL']);
  });

  it('answers 404 with details.field customer_id for an unknown customer, and 400 naming the field for bad input', async () => {
    const unknown = await stack.api.post('/v1/wallets', { customer_id: 'cust_01HZZZZZZZZZZZZZZZZZZZZZZZ', currency: 'usd' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatchObject({ internal_error: 'not_found', details: { field: 'customer_id' } });
    const customerId = await newCustomer();
    for (const [body, field] of [
      [{ customer_id: customerId, currency: 'usd', color: 'red' }, 'color'],
      [{ customer_id: customerId, currency: 'dollars' }, 'currency'],
      [{ customer_id: customerId, currency: 'usd', conversion_rate: 1.5 }, 'conversion_rate'],
      [{ customer_id: customerId, currency: 'usd', conversion_rate: '0' }, 'conversion_rate'],
      [{ customer_id: customerId, currency: 'usd', initial_credits_to_load: '-1' }, 'initial_credits_to_load'],
      [{ customer_id: customerId, currency: 'usd', initial_credits_to_load: '1', initial_credits_expiry_date_utc: '2001-01-01T00:00:00Z' }, 'initial_credits_expiry_date_utc'],
      [{ customer_id: customerId, currency: 'usd', auto_topup: { enabled: true, threshold: '1' } }, 'auto_topup.amount'],
      [{ customer_id: customerId, currency: 'usd', alert_settings: { critical: { threshold: '10' }, warning: { threshold: '5' } } }, 'alert_settings.warning.threshold'],
      [{ currency: 'usd' }, 'customer_id'],
    ] as const) {
      const res = await stack.api.post('/v1/wallets', body);
      expect([res.status, res.body.error.internal_error, res.body.error.details.field]).toEqual([400, 'validation_error', field]);
    }
    const wallets = await stack.api.get(`/v1/customers/${customerId}/wallets`);
    expect(wallets.body).toEqual({ items: [], pagination: { total: 0, limit: 50, offset: 0 } });
  });

  it('tops up and debits with exact decimals, refuses overdrafts, and honours idempotency keys', async () => {
    const w = await newWallet({ conversion_rate: '3', topup_conversion_rate: '2' });
    const top = await stack.api.post(`/v1/wallets/${w.id}/topup`, { credits_to_add: '0.1', idempotency_key: 't1' });
    expect(top.status).toBe(201);
    expect(top.body).toMatchObject({ type: 'CREDIT', credit_amount: '0.1', amount: '0.2', credits_available: '0.1', transaction_reason: 'PURCHASED_CREDIT_DIRECT', idempotency_key: 't1' });
    await stack.api.post(`/v1/wallets/${w.id}/topup`, { credits_to_add: '0.2' });
    const debit = await stack.api.post(`/v1/wallets/${w.id}/debit`, { credits: '0.25', idempotency_key: 'd1' });
    expect(debit.status).toBe(201);
    expect(debit.body).toMatchObject({ type: 'DEBIT', credit_amount: '0.25', amount: '0.75', credit_balance_before: '0.3', credit_balance_after: '0.05', transaction_reason: 'MANUAL_BALANCE_DEBIT' });
    const replay = await stack.api.post(`/v1/wallets/${w.id}/debit`, { credits: '0.25', idempotency_key: 'd1' });
    expect([replay.status, replay.body.id]).toEqual([201, debit.body.id]);
    const conflict = await stack.api.post(`/v1/wallets/${w.id}/debit`, { credits: '0.01', idempotency_key: 'd1' });
    expect([conflict.status, conflict.body.error.internal_error]).toEqual([409, 'idempotency_conflict']);
    const overdraft = await stack.api.post(`/v1/wallets/${w.id}/debit`, { credits: '0.06' });
    expect(overdraft.status).toBe(400);
    expect(overdraft.body.error).toMatchObject({ internal_error: 'validation_error', details: { available_credits: '0.05' } });
    for (const [body, field] of [
      [{ credits: 1 }, 'credits'],
      [{ credits: '0' }, 'credits'],
      [{ credits: '1', transaction_reason: 'CREDIT_EXPIRED' }, 'transaction_reason'],
      [{ credits: '1', transaction_reason: 'INVOICE_CREDIT_APPLIED' }, 'transaction_reason'],
      [{ credits: '1', extra: true }, 'extra'],
    ] as const) {
      const res = await stack.api.post(`/v1/wallets/${w.id}/debit`, body);
      expect([res.status, res.body.error.details.field]).toEqual([400, field]);
    }
    const balance = await stack.api.get(`/v1/wallets/${w.id}/balance`);
    expect(balance.body).toEqual({
      wallet_id: w.id,
      currency: 'usd',
      balance: '0.15',
      credit_balance: '0.05',
      conversion_rate: '3',
      credits_available_breakdown: { purchased: '0.05', free: '0' },
      // No reservation holds any of it (docs/api/reservations.md).
      credits_held: '0',
      credits_available: '0.05',
    });
    const missing = await stack.api.post('/v1/wallets/wallet_missing/debit', { credits: '1' });
    expect(missing.status).toBe(404);
  });

  it('splits the usable credits of the balance into free (free and subscription grants) and purchased', async () => {
    const w = await newWallet({ initial_credits_to_load: '4' });
    const breakdown = async () => (await stack.api.get(`/v1/wallets/${w.id}/balance`)).body.credits_available_breakdown;
    expect(await breakdown()).toEqual({ purchased: '0', free: '4' });
    const grant = await stack.api.post(`/v1/wallets/${w.id}/topup`, { credits_to_add: '2.5', transaction_reason: 'SUBSCRIPTION_CREDIT_GRANT' });
    expect(grant.status).toBe(201);
    const bought = await stack.api.post(`/v1/wallets/${w.id}/topup`, { credits_to_add: '3', transaction_reason: 'PURCHASED_CREDIT_DIRECT', priority: 1 });
    expect(bought.status).toBe(201);
    expect(await breakdown()).toEqual({ purchased: '3', free: '6.5' });
    // The purchased credits go first (priority 1), then the oldest free ones.
    expect((await stack.api.post(`/v1/wallets/${w.id}/debit`, { credits: '4' })).status).toBe(201);
    expect(await breakdown()).toEqual({ purchased: '0', free: '5.5' });
    const balance = await stack.api.get(`/v1/wallets/${w.id}/balance`);
    expect(balance.body.credit_balance).toBe('5.5');
  });

  it('100 parallel debits of 1 credit on a 50-credit wallet through the gateway: 50 succeed, the balance is "0"', async () => {
    const w = await newWallet({ initial_credits_to_load: '50' });
    const results = await Promise.all(Array.from({ length: 100 }, () => stack.api.post(`/v1/wallets/${w.id}/debit`, { credits: '1' })));
    expect(results.filter((r) => r.status === 201)).toHaveLength(50);
    expect(results.filter((r) => r.status === 400)).toHaveLength(50);
    const balance = await stack.api.get(`/v1/wallets/${w.id}/balance`);
    expect(balance.body.credit_balance).toBe('0');
    expect(balance.body.balance).toBe('0');
  });

  it('PENDING invoiced credits show in the real-time balance until settled; the list filters and pages', async () => {
    const w = await newWallet({ initial_credits_to_load: '5' });
    const pending = await stack.api.post(`/v1/wallets/${w.id}/topup`, {
      credits_to_add: '20',
      transaction_reason: 'PURCHASED_CREDIT_INVOICED',
      priority: 1,
      expiry_date_utc: new Date(Date.now() + 86_400_000).toISOString(),
    });
    expect(pending.body).toMatchObject({ transaction_status: 'PENDING', credits_available: '0', priority: 1 });
    const rt = await stack.api.get(`/v1/wallets/${w.id}/balance?include_real_time_balance=true`);
    expect(rt.body).toMatchObject({ credit_balance: '5', real_time_credit_balance: '25', real_time_balance: '25' });
    // An invoiced credit is settled by its invoice only (ADR 0056): the public route refuses it, nothing moves.
    const refused = await stack.api.post(`/v1/wallets/${w.id}/transactions/${pending.body.id}/settle`, { status: 'COMPLETED' });
    expect([refused.status, refused.body.error.internal_error, refused.body.error.details.code]).toEqual([409, 'version_conflict', 'settled_by_invoice']);
    expect((await stack.api.get(`/v1/wallets/${w.id}/balance?include_real_time_balance=true`)).body).toMatchObject({ credit_balance: '5', real_time_credit_balance: '25' });
    // Paying the top-up's invoice (billing made it from the wallet's event) completes the credit.
    const invoice = await waitFor(
      async () => {
        const items = (await stack.api.get(`/v1/invoices?customer_id=${w.customer_id}`)).body.items as Array<{ id: string; status: string; billing_reason: string }>;
        return items.find((i) => i.billing_reason === 'CREDIT_PURCHASE' && i.status === 'finalized');
      },
      { what: 'the invoice of the invoiced top-up' },
    );
    expect((await stack.api.post('/v1/payments', { invoice_id: invoice.id, amount: 2000, payment_method_type: 'OFFLINE' })).status).toBe(201);
    const settled = await waitFor(
      async () => {
        const items = (await stack.api.get(`/v1/wallets/${w.id}/transactions?limit=100`)).body.items as Array<{ id: string; transaction_status: string }>;
        return items.find((t) => t.id === pending.body.id && t.transaction_status === 'COMPLETED');
      },
      { what: 'the invoiced credit to complete' },
    );
    expect(settled).toMatchObject({ transaction_status: 'COMPLETED', credits_available: '20', credit_balance_after: '25' });
    const bad = await stack.api.post(`/v1/wallets/${w.id}/transactions/${pending.body.id}/settle`, { status: 'FAILED' });
    expect(bad.status).toBe(409);
    await stack.api.post(`/v1/wallets/${w.id}/debit`, { credits: '1' });
    const credits = await stack.api.get(`/v1/wallets/${w.id}/transactions?type=CREDIT&transaction_status=COMPLETED`);
    expect(credits.body.items.map((t: { transaction_reason: string }) => t.transaction_reason)).toEqual(['PURCHASED_CREDIT_INVOICED', 'FREE_CREDIT_GRANT']);
    const page = await stack.api.get(`/v1/wallets/${w.id}/transactions?limit=1&offset=1`);
    expect(page.body.pagination).toEqual({ total: 3, limit: 1, offset: 1 });
    expect(page.body.items[0].id).toBe(pending.body.id);
    const byReason = await stack.api.get(`/v1/wallets/${w.id}/transactions?transaction_reason=MANUAL_BALANCE_DEBIT`);
    expect(byReason.body.items).toHaveLength(1);
    const badQuery = await stack.api.get(`/v1/wallets/${w.id}/transactions?type=BOTH`);
    expect([badQuery.status, badQuery.body.error.details.field]).toEqual([400, 'type']);
  });

  it('PATCH changes settings and status with If-Match, refuses balance fields, and terminate closes the wallet', async () => {
    const w = await newWallet({ initial_credits_to_load: '8' });
    const got = await stack.api.get(`/v1/wallets/${w.id}`);
    const etag = got.headers.etag as string;
    const balanceField = await stack.api.patch(`/v1/wallets/${w.id}`, { credit_balance: '1000' });
    expect([balanceField.status, balanceField.body.error.details.field]).toEqual([400, 'credit_balance']);
    const frozen = await stack.api.patch(
      `/v1/wallets/${w.id}`,
      { wallet_status: 'frozen', description: 'on hold', alert_settings: { critical: { threshold: '10' } } },
      { 'if-match': etag },
    );
    expect(frozen.status).toBe(200);
    expect(frozen.body).toMatchObject({ wallet_status: 'frozen', description: 'on hold', alert_state: 'critical' });
    const stale = await stack.api.patch(`/v1/wallets/${w.id}`, { wallet_status: 'active' }, { 'if-match': etag });
    expect([stale.status, stale.body.error.internal_error]).toEqual([409, 'version_conflict']);
    const refused = await stack.api.post(`/v1/wallets/${w.id}/debit`, { credits: '1' });
    expect([refused.status, refused.body.error.details.wallet_status]).toEqual([400, 'frozen']);
    const closed = await stack.api.post(`/v1/wallets/${w.id}/terminate`, {});
    expect(closed.body).toMatchObject({ wallet_status: 'closed', credit_balance: '0' });
    const reopen = await stack.api.patch(`/v1/wallets/${w.id}`, { wallet_status: 'active' });
    expect(reopen.status).toBe(400);
    const closeAgain = await stack.api.patch(`/v1/wallets/${w.id}`, { wallet_status: 'closed' });
    expect([closeAgain.status, closeAgain.body.error.details.field]).toEqual([400, 'wallet_status']);
  });

  it('does not route the internal invoice endpoints of the wallet (billing calls them directly)', async () => {
    for (const path of ['allocation', 'payments', 'refund']) {
      for (const prefix of ['/internal/v1', '/v1']) {
        const res = await stack.api.post(`${prefix}/invoices/inv_x/${path}`, {});
        expect([path, prefix, res.status, res.body.error.internal_error]).toEqual([path, prefix, 404, 'not_found']);
      }
    }
    // The batch allocation of the period job (POST /internal/v1/invoices/allocations) neither,
    // nor the credits by key (POST /internal/v1/credits and its batch, ADR 0039 and 0048).
    for (const prefix of ['/internal/v1', '/v1']) {
      for (const path of ['invoices/allocations', 'credits', 'credits/batch']) {
        const res = await stack.api.post(`${prefix}/${path}`, {});
        expect([prefix, path, res.status, res.body.error.internal_error]).toEqual([prefix, path, 404, 'not_found']);
      }
    }
  });

  it('keeps wallets invisible to other tenants and enforces wallets permissions, the cron endpoint included', async () => {
    const w = await newWallet({ initial_credits_to_load: '1' });
    const other = stack.api.withKey(await stack.keyFor('tenant-b', 'production'));
    expect((await other.get(`/v1/wallets/${w.id}`)).status).toBe(404);
    expect((await other.post(`/v1/wallets/${w.id}/debit`, { credits: '1' })).status).toBe(404);
    expect((await other.get(`/v1/customers/${w.customer_id}/wallets`)).status).toBe(404);
    const reader = stack.api.withKey(await stack.keyFor('tenant-a', 'production', ['wallets:read']));
    expect((await reader.get(`/v1/wallets/${w.id}`)).status).toBe(200);
    expect((await reader.post(`/v1/wallets/${w.id}/debit`, { credits: '1' })).status).toBe(403);
    expect((await reader.post('/v1/cron/expire-credits', {})).status).toBe(403);
    const cron = await stack.api.post('/v1/cron/expire-credits', {});
    expect(cron.status).toBe(200);
    expect(cron.body).toEqual({ expired_transactions: expect.any(Number), wallets_affected: expect.any(Number) });
  });

  it('deleting a customer closes its wallets; GET /v1/customers/{id}/wallets lists them', async () => {
    const customerId = await newCustomer();
    const a = await stack.api.post('/v1/wallets', { customer_id: customerId, currency: 'usd', initial_credits_to_load: '4' });
    const b = await stack.api.post('/v1/wallets', { customer_id: customerId, currency: 'gbp' });
    const listed = await stack.api.get(`/v1/customers/${customerId}/wallets`);
    expect(listed.body.items.map((w: { id: string }) => w.id)).toEqual([a.body.id, b.body.id]);
    expect(listed.body.pagination).toEqual({ total: 2, limit: 50, offset: 0 });
    expect((await stack.api.delete(`/v1/customers/${customerId}`)).status).toBe(204);
    await waitFor(async () => {
      const res = await stack.api.get(`/v1/customers/${customerId}/wallets`);
      return res.status === 200 && res.body.items.every((w: { wallet_status: string }) => w.wallet_status === 'closed');
    }, { what: 'wallets of the deleted customer to close' });
    const entries = await stack.api.get(`/v1/wallets/${a.body.id}/transactions?transaction_reason=WALLET_TERMINATION`);
    expect(entries.body.items.map((t: { credit_amount: string }) => t.credit_amount)).toEqual(['4']);
    const late = await stack.api.post('/v1/wallets', { customer_id: customerId, currency: 'usd' });
    expect(late.status).toBe(404);
  });
});
