import { createHmac, randomBytes } from 'node:crypto';
import { verifyWebhook, WebhookVerificationError } from './webhooks';

// Signed here as docs/api/webhooks.md describes it, independently of the dispatcher's code
// (the integration test verifies real deliveries of the dispatcher).
const secret = `whsec_${randomBytes(24).toString('base64')}`;
const now = new Date('2026-11-26T12:00:00Z');
const seconds = Math.floor(now.getTime() / 1000);

function signed(body: string, id = 'evt_01', timestamp = seconds, key = secret) {
  const standard = createHmac('sha256', Buffer.from(key.slice(6), 'base64')).update(`${id}.${timestamp}.${body}`).digest('base64');
  return {
    'content-type': 'application/json',
    'X-Billstream-Signature': createHmac('sha256', Buffer.from(key, 'utf8')).update(body).digest('hex'),
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': `v1,${standard}`,
  };
}

const body = JSON.stringify({ id: 'evt_01', event_name: 'customer.created', tenant_id: 't', environment_id: 'e', user_id: 'u', timestamp: now.toISOString(), payload: { customer: { id: 'cust_1' } } });

function reason(fn: () => unknown): string | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    expect(err).toBeInstanceOf(WebhookVerificationError);
    return (err as WebhookVerificationError).reason;
  }
}

describe('verifyWebhook', () => {
  it('accepts a delivery signed both ways and returns its typed envelope', () => {
    const envelope = verifyWebhook(body, signed(body), secret, { now });
    expect(envelope.event_name).toBe('customer.created');
    if (envelope.event_name === 'customer.created' && 'customer' in envelope.payload) expect(envelope.payload.customer.id).toBe('cust_1');
    expect(verifyWebhook(Buffer.from(body), new Headers(signed(body)), secret, { now }).id).toBe('evt_01');
  });

  it('accepts any of several v1 signatures (secret rotation)', () => {
    const headers = signed(body);
    headers['webhook-signature'] = `v1,${randomBytes(32).toString('base64')} ${headers['webhook-signature']}`;
    expect(verifyWebhook(body, headers, secret, { now }).id).toBe('evt_01');
  });

  it('refuses a changed body, another secret, a missing header and a stale or future timestamp', () => {
    expect(reason(() => verifyWebhook(body.replace('cust_1', 'cust_2'), signed(body), secret, { now }))).toBe('bad_signature');
    expect(reason(() => verifyWebhook(body, signed(body), `whsec_${randomBytes(24).toString('base64')}`, { now }))).toBe('bad_signature');
    const { 'webhook-signature': _dropped, ...unsigned } = signed(body);
    expect(reason(() => verifyWebhook(body, unsigned, secret, { now }))).toBe('missing_header');
    const { 'X-Billstream-Signature': _gone, ...onlyStandard } = signed(body);
    expect(reason(() => verifyWebhook(body, onlyStandard, secret, { now }))).toBe('missing_header');
    expect(reason(() => verifyWebhook(body, signed(body, 'evt_01', seconds - 301), secret, { now }))).toBe('timestamp_out_of_tolerance');
    expect(reason(() => verifyWebhook(body, signed(body, 'evt_01', seconds + 301), secret, { now }))).toBe('timestamp_out_of_tolerance');
    expect(verifyWebhook(body, signed(body, 'evt_01', seconds - 301), secret, { now, toleranceSeconds: 600 }).id).toBe('evt_01');
    expect(reason(() => verifyWebhook(body, signed(body), 'not-a-secret', { now }))).toBe('bad_secret');
  });

  it('refuses a replay whose timestamp was moved forward: the standard signature binds it', () => {
    const old = signed(body, 'evt_01', seconds - 3600);
    const replay = { ...old, 'webhook-timestamp': String(seconds) };
    expect(reason(() => verifyWebhook(body, replay, secret, { now }))).toBe('bad_signature');
  });

  it('refuses an envelope whose id is not the webhook-id', () => {
    expect(reason(() => verifyWebhook(body, signed(body, 'evt_other'), secret, { now }))).toBe('bad_body');
  });
});
