import { createHmac, timingSafeEqual } from 'node:crypto';
import { billstreamSignature, deliveryHeaders, generateSecret, standardWebhooksSignature } from './signing';

/** A receiver's check of X-Billstream-Signature, written from the spec alone. */
function receiverAccepts(secret: string, rawBody: Buffer, header: string): boolean {
  const expected = Buffer.from(createHmac('sha256', secret).update(rawBody).digest('hex'));
  const given = Buffer.from(header);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

/** A receiver's check of the Standard Webhooks headers, written from that specification. */
function standardReceiverAccepts(secret: string, headers: Record<string, string>, rawBody: string): boolean {
  const key = Buffer.from(secret.split('_')[1], 'base64');
  const signed = `${headers['webhook-id']}.${headers['webhook-timestamp']}.${rawBody}`;
  const expected = createHmac('sha256', key).update(signed).digest('base64');
  return headers['webhook-signature'].split(' ').some((s) => s === `v1,${expected}`);
}

describe('webhook signing', () => {
  it('makes whsec_ secrets of 24 random bytes in base64', () => {
    const a = generateSecret();
    const b = generateSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(Buffer.from(a.slice(6), 'base64')).toHaveLength(24);
    expect(a).not.toBe(b);
  });

  it('signs the exact body bytes in lower-case hex, keyed with the secret as shown', () => {
    const secret = generateSecret();
    const body = '{"id":"evt_1","payload":{"amount":"0.30","name":"Zoë"}}';
    const signature = billstreamSignature(secret, body);
    expect(signature).toMatch(/^[0-9a-f]{64}$/);
    expect(receiverAccepts(secret, Buffer.from(body, 'utf8'), signature)).toBe(true);
    expect(receiverAccepts(secret, Buffer.from(body.replace('0.30', '0.3'), 'utf8'), signature)).toBe(false);
    expect(receiverAccepts(generateSecret(), Buffer.from(body, 'utf8'), signature)).toBe(false);
  });

  it('sends both signatures and the Standard Webhooks headers', () => {
    const secret = generateSecret();
    const body = '{"id":"evt_01HZ"}';
    const now = new Date('2026-01-02T03:04:05.678Z');
    const headers = deliveryHeaders(secret, 'evt_01HZ', body, now);
    expect(headers).toMatchObject({
      'content-type': 'application/json',
      'webhook-id': 'evt_01HZ',
      'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
      'x-billstream-signature': billstreamSignature(secret, body),
    });
    expect(headers['webhook-signature']).toBe(standardWebhooksSignature(secret, 'evt_01HZ', Math.floor(now.getTime() / 1000), body));
    expect(standardReceiverAccepts(secret, headers, body)).toBe(true);
    expect(standardReceiverAccepts(secret, { ...headers, 'webhook-timestamp': '1' }, body)).toBe(false);
  });
});
