import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { waitFor } from '@billstream/testing';
import { startIntegrationStack, type IntegrationStack } from '../../support/stack';

/**
 * POST /v1/webhook-endpoints/{id}/deliveries/{delivery_id}/resend through the gateway (real
 * Postgres and Kafka): the event's stored envelope is sent again, signed as usual, and recorded
 * as its next attempt; another tenant's delivery, a test delivery and a bad body are refused.
 */
describe('resending a webhook delivery (through the gateway)', () => {
  let stack: IntegrationStack;
  let server: http.Server;
  const received: Array<{ raw: Buffer; headers: http.IncomingHttpHeaders }> = [];
  let answer = 500;
  let url = '';

  beforeAll(async () => {
    // Retries far away: the only second attempt is the resend.
    stack = await startIntegrationStack({ extra: { env: { WEBHOOK_ALLOW_INSECURE: 'true', WEBHOOK_RETRY_SCHEDULE: '1h', WEBHOOK_POLL_MS: '100' } } });
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ raw: Buffer.concat(chunks), headers: req.headers });
        res.writeHead(answer).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  });
  afterAll(async () => {
    await new Promise((r) => server?.close(r));
    await stack?.stop();
  });

  it('sends the same envelope again as the next attempt, signed, and lists both attempts', async () => {
    const ep = await stack.api.post('/v1/webhook-endpoints', { url, events: ['customer.created'] });
    expect(ep.status).toBe(201);
    const customer = await stack.api.post('/v1/customers', { external_customer_id: 'resend-1', name: 'Resend' });
    expect(customer.status).toBe(201);
    const first = await waitFor(async () => (await stack.api.get(`/v1/webhook-endpoints/${ep.body.id}/deliveries`)).body.deliveries[0], { timeoutMs: 20_000, what: 'the first attempt' });
    expect(first).toMatchObject({ attempt: 1, status: 'failed', response_code: 500, event_name: 'customer.created' });

    answer = 200;
    const resent = await stack.api.post(`/v1/webhook-endpoints/${ep.body.id}/deliveries/${first.id}/resend`, {});
    expect(resent.status).toBe(200);
    expect(resent.body).toMatchObject({ endpoint_id: ep.body.id, event_id: first.event_id, event_name: 'customer.created', attempt: 2, status: 'succeeded', response_code: 200, retry_at: null });
    expect(resent.body.id).not.toBe(first.id);

    expect(received).toHaveLength(2);
    expect(received[1]!.raw.equals(received[0]!.raw)).toBe(true);
    expect(JSON.parse(received[1]!.raw.toString('utf8'))).toMatchObject({ id: first.event_id, payload: { customer: { id: customer.body.id } } });
    expect(received[1]!.headers['webhook-id']).toBe(first.event_id);
    expect(received[1]!.headers['x-billstream-signature']).toBe(createHmac('sha256', ep.body.secret).update(received[1]!.raw).digest('hex'));

    const listed = await stack.api.get(`/v1/webhook-endpoints/${ep.body.id}/deliveries?event_id=${first.event_id}`);
    expect(listed.body.deliveries.map((d: { attempt: number; status: string }) => [d.attempt, d.status])).toEqual([
      [2, 'succeeded'],
      [1, 'failed'],
    ]);

    // Another tenant sees neither the endpoint nor the delivery: 404, and nothing is sent.
    const other = stack.api.withKey(await stack.keyFor('tenant-b', 'production'));
    const foreign = await other.post(`/v1/webhook-endpoints/${ep.body.id}/deliveries/${first.id}/resend`, {});
    expect([foreign.status, foreign.body.error.internal_error]).toEqual([404, 'not_found']);
    expect(received).toHaveLength(2);
  });

  it('answers 404 for an unknown delivery or a test delivery (no envelope kept), 400 for a body with fields', async () => {
    const ep = await stack.api.post('/v1/webhook-endpoints', { url, events: ['customer.created'] });
    const before = received.length;
    const unknown = await stack.api.post(`/v1/webhook-endpoints/${ep.body.id}/deliveries/whd_NOPE/resend`, {});
    expect([unknown.status, unknown.body.error.details.field]).toEqual([404, 'delivery_id']);
    const test = await stack.api.post(`/v1/webhook-endpoints/${ep.body.id}/test`, { event_name: 'customer.created' });
    expect(test.status).toBe(200);
    const again = await stack.api.post(`/v1/webhook-endpoints/${ep.body.id}/deliveries/${test.body.id}/resend`, {});
    expect(again.status).toBe(404);
    expect(again.body.error.message).toMatch(/no longer kept/);
    const bad = await stack.api.post(`/v1/webhook-endpoints/${ep.body.id}/deliveries/${test.body.id}/resend`, { force: true });
    expect([bad.status, bad.body.error.details.field]).toEqual([400, 'force']);
    const unknownEndpoint = await stack.api.post(`/v1/webhook-endpoints/we_NOPE/deliveries/${test.body.id}/resend`, {});
    expect(unknownEndpoint.status).toBe(404);
    expect(received.length).toBe(before + 1);
  });
});
