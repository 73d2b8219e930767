import { BillstreamError, createClient, type BillstreamClient } from '@billstream/client';
import { startIntegrationStack, type IntegrationStack } from '../../support/stack';

// The client's reservation helpers against the real stack (gateway, wallet, Postgres, Kafka).

describe('@billstream/client reserve, commit, release and withReservation', () => {
  let stack: IntegrationStack;
  let client: BillstreamClient;
  let seq = 0;
  beforeAll(async () => {
    stack = await startIntegrationStack();
    client = createClient({ apiKey: stack.api.key!, baseUrl: stack.embedded.url, retry: { baseDelayMs: 20, maxDelayMs: 200 } });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const wallet = async (credits: string) => {
    const customer = await client.POST('/v1/customers', { body: { external_customer_id: `resv-client-${(seq += 1)}-${Date.now()}` } });
    const w = await client.POST('/v1/wallets', { body: { customer_id: customer.id, currency: 'usd', initial_credits_to_load: credits } });
    return { walletId: w.id, customerId: customer.id };
  };
  const balanceOf = (id: string) => client.GET('/v1/wallets/{id}/balance', { params: { path: { id } } });

  it('reserves with a key of its own, commits and releases', async () => {
    const { walletId, customerId } = await wallet('10');
    const held = await client.reserve({ customer_id: customerId, currency: 'usd', credits: '4' });
    expect(held).toMatchObject({ status: 'held', credits_held: '4', idempotency_key: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    const committed = await client.commit(held.id, '2.5');
    expect(committed).toMatchObject({ status: 'committed', credits_committed: '2.5' });
    // The same commit again answers it unchanged.
    expect(await client.commit(held.id, '2.5')).toEqual(committed);
    const other = await client.reserve({ customer_id: customerId, currency: 'usd', credits: '1' });
    expect((await client.release(other.id)).status).toBe('released');
    expect(await balanceOf(walletId)).toMatchObject({ credit_balance: '7.5', credits_held: '0', credits_available: '7.5' });
    const short = await client.reserve({ customer_id: customerId, currency: 'usd', credits: '8' }).catch((e: unknown) => e);
    expect(short).toBeInstanceOf(BillstreamError);
    expect(short).toMatchObject({ status: 402, internal_error: 'insufficient_credits', details: { available: '7.5' } });
  });

  it('withReservation commits what the work answers, and releases the hold when the work throws', async () => {
    const { walletId, customerId } = await wallet('100');
    // The LLM pattern: reserve the most the call may cost, commit what it cost.
    const { reservation, value } = await client.withReservation({ customer_id: customerId, currency: 'usd', credits: '40' }, async (r) => {
      expect((await balanceOf(walletId)).credits_held).toBe('40');
      expect(r.status).toBe('held');
      return { credits: '12.75', value: 'the completion' };
    });
    expect([reservation.status, reservation.credits_committed, value]).toEqual(['committed', '12.75', 'the completion']);
    const failure = new Error('the model timed out');
    let heldId = '';
    await expect(
      client.withReservation({ customer_id: customerId, currency: 'usd', credits: '30' }, async (r) => {
        heldId = r.id;
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect((await client.GET('/v1/reservations/{id}', { params: { path: { id: heldId } } })).status).toBe('released');
    // A commit the API refuses (more than held) releases the hold too, and the refusal is thrown.
    const refused = await client.withReservation({ customer_id: customerId, currency: 'usd', credits: '5' }, async () => '6').catch((e: unknown) => e);
    expect(refused).toMatchObject({ status: 400, details: { field: 'credits' } });
    expect(await balanceOf(walletId)).toMatchObject({ credit_balance: '87.25', credits_held: '0' });
  });
});
