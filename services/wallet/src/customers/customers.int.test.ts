import { TOPICS } from '@billstream/bus';
import type { WebhookEventName } from '@billstream/contracts';
import { Exact } from '@billstream/money';
import { newDomainEvent } from '@billstream/outbox';
import { ENVIRONMENT, META, TENANT, startLedgerHarness, type LedgerHarness } from '../testing/harness';
import { assertLedgerAddsUp } from '../testing/invariants';

function customerEvent(type: WebhookEventName, id: string) {
  const event = newDomainEvent(type, { tenantId: TENANT, environmentId: ENVIRONMENT, actor: 'key_x' }, {
    customer: { id, tenant_id: TENANT, environment_id: ENVIRONMENT, external_id: `ext-${id}` },
  });
  return { key: id, value: JSON.stringify(event), headers: { 'message-id': event.id, 'event-type': type } };
}

describe('customer projection and deletion (real Postgres)', () => {
  let h: LedgerHarness;
  beforeAll(async () => {
    h = await startLedgerHarness();
  });
  afterAll(async () => {
    await h?.stop();
  });

  it('learns customers from customer-events and accepts wallets for them', async () => {
    await h.bus.publish(TOPICS.customerEvents, [customerEvent('customer.created', 'cust_from_event')]);
    expect(await h.db('customers').where({ id: 'cust_from_event' }).first()).toMatchObject({ tenant_id: TENANT, deleted_at: null });
    const w = await h.wallet({ customerId: 'cust_from_event' });
    expect(w.customerId).toBe('cust_from_event');
  });

  it('gives 404 with details.field customer_id for an unknown customer or one of another tenant', async () => {
    await expect(h.wallet({ customerId: 'cust_nobody' })).rejects.toMatchObject({
      kind: 'not_found',
      details: { field: 'customer_id', customer_id: 'cust_nobody' },
    });
    await expect(h.service.wallets.create({ ...META, tenantId: 'other-tenant' }, baseInput('cust_from_event'))).rejects.toMatchObject({
      kind: 'not_found',
      details: { field: 'customer_id' },
    });
  });

  it('customer.deleted terminates every open wallet of the customer, once, even when delivered twice', async () => {
    const customerId = await h.customer('cust_to_delete');
    const usd = await h.wallet({ customerId, initialCredits: new Exact('12.5') });
    const eur = await h.wallet({ customerId, currency: 'eur', initialCredits: new Exact('3') });
    await h.service.entries.topup(META, eur.id, {
      credits: new Exact(4),
      reason: 'PURCHASED_CREDIT_INVOICED',
      expiryDate: null,
      priority: null,
      description: null,
      idempotencyKey: null,
    });
    const deleted = customerEvent('customer.deleted', customerId);
    await h.bus.publish(TOPICS.customerEvents, [deleted]);
    await h.bus.publish(TOPICS.customerEvents, [deleted]);
    for (const [w, left] of [
      [usd, '12.5'],
      [eur, '3'],
    ] as const) {
      const row = await h.db('wallets').where({ id: w.id }).first();
      expect([row.wallet_status, row.credit_balance]).toEqual(['closed', '0']);
      const debits = await h.db('transactions').where({ wallet_id: w.id, transaction_reason: 'WALLET_TERMINATION' });
      expect(debits.map((d) => d.credit_amount)).toEqual([left]);
      const terminated = await h.events(w.id, 'wallet.terminated');
      expect(terminated).toHaveLength(1);
      expect(terminated[0].payload.wallet).toMatchObject({ id: w.id, wallet_status: 'closed', credit_balance: '0' });
      await assertLedgerAddsUp(h.db, w.id, h.clock.now());
    }
    expect(await h.db('transactions').where({ wallet_id: eur.id, transaction_status: 'FAILED' })).toHaveLength(1);
    await expect(h.wallet({ customerId })).rejects.toMatchObject({ kind: 'not_found', details: { field: 'customer_id' } });
  });

  it('a customer.created arriving after the deletion does not revive the customer', async () => {
    await h.bus.publish(TOPICS.customerEvents, [customerEvent('customer.deleted', 'cust_ghost')]);
    await h.bus.publish(TOPICS.customerEvents, [customerEvent('customer.updated', 'cust_ghost')]);
    await expect(h.wallet({ customerId: 'cust_ghost' })).rejects.toMatchObject({ kind: 'not_found' });
  });

  function baseInput(customerId: string) {
    return {
      customerId,
      currency: 'usd',
      walletType: 'PRE_PAID' as const,
      conversionRate: new Exact(1),
      topupConversionRate: null,
      initialCredits: null,
      initialCreditsExpiry: null,
      description: null,
      metadata: {},
      autoTopup: null,
      alertSettings: null,
      allowedPriceTypes: null,
    };
  }
});
