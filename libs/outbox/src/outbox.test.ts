import { newDomainEvent, type EventContext } from './outbox';

const ctx: EventContext = { tenantId: 't1', environmentId: 'production', actor: 'key_1' };

describe('newDomainEvent', () => {
  it('names the event with a public webhook event name and stamps scope, actor and time', () => {
    const event = newDomainEvent('customer.created', ctx, { customer: { id: 'cust_1' } });
    expect(event).toEqual({
      id: expect.stringMatching(/^evt_/),
      type: 'customer.created',
      tenant_id: 't1',
      environment_id: 'production',
      user_id: 'key_1',
      occurred_at: expect.stringMatching(/Z$/),
      payload: { customer: { id: 'cust_1' } },
    });
  });

  it('does not compile with a misspelt name', () => {
    // @ts-expect-error 'wallet.transaction.craeted' is not a WebhookEventName
    const event = newDomainEvent('wallet.transaction.craeted', ctx, {});
    const name: string = 'invoice.finalized';
    // @ts-expect-error a plain string is not a WebhookEventName either
    newDomainEvent(name, ctx, {});
    expect(event.type).toBe('wallet.transaction.craeted');
  });
});
