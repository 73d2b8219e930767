/**
 * The typing of calls, checked by `npm run typecheck` (each `@ts-expect-error` must stay an
 * error); the function is never run.
 */
import type { BillstreamClient } from './client';
import { isTestPayload, type WebhookEnvelope } from './webhooks';

async function typedCalls(client: BillstreamClient) {
  const customer = await client.POST('/v1/customers', { body: { external_customer_id: 'acme', email: 'a@b.example' } });
  const id: string = customer.id;
  const wallet = await client.GET('/v1/wallets/{id}', { params: { path: { id } } });
  const balance: string = wallet.credit_balance;
  const list = await client.GET('/v1/customers', { params: { query: { limit: 10, sort: 'name' } } });
  const total: number = list.pagination.total;
  const txn = await client.POST('/v1/wallets/{id}/debit', { params: { path: { id: wallet.id } }, body: { credits: '1' } });
  const key: string | null = txn.idempotency_key;
  const gone: undefined = await client.DELETE('/v1/customers/{id}', { params: { path: { id } } });
  await client.GET('/v1/api-keys');

  // @ts-expect-error the path parameter is required
  await client.GET('/v1/wallets/{id}');
  // @ts-expect-error the body is required
  await client.POST('/v1/customers', {});
  // @ts-expect-error an unknown body field
  await client.POST('/v1/customers', { body: { external_customer_id: 'x', nickname: 'y' } });
  // @ts-expect-error no such path
  await client.GET('/v1/nowhere');
  // @ts-expect-error no PATCH on customers
  await client.PATCH('/v1/customers/{id}', { params: { path: { id } }, body: {} });
  // @ts-expect-error credit_balance is a string (exact decimal), not a number
  const wrong: number = wallet.credit_balance;
  return [balance, total, key, gone, wrong];
}

// The README's webhook handler: the event name types the payload once test deliveries are set apart.
function handle(event: WebhookEnvelope): string {
  if (isTestPayload(event.payload)) return 'test';
  switch (event.event_name) {
    case 'wallet.credit_balance.dropped':
      return `${event.payload.wallet.customer_id} ${event.payload.alert.state}`;
    case 'invoice.update.finalized':
      return event.payload.invoice.id;
    case 'wallet.transaction.created':
      // @ts-expect-error a transaction event has no payload.wallet
      return event.payload.wallet.id;
    default:
      return event.event_name;
  }
}

it('types every path, parameter, body and answer (checked by the type checker)', () => {
  expect(typeof typedCalls).toBe('function');
  expect(typeof handle).toBe('function');
});
