import { createHmac, randomBytes } from 'node:crypto';
import { bodySignature } from '@billstream/http';

export const SECRET_PREFIX = 'whsec_';
export const SIGNATURE_HEADER = 'X-Billstream-Signature';

/** A new endpoint secret: `whsec_` and 24 random bytes in base64 (the Standard Webhooks form). */
export function generateSecret(): string {
  return SECRET_PREFIX + randomBytes(24).toString('base64');
}

/**
 * `X-Billstream-Signature`: lower-case hex HMAC-SHA256 of the raw body, keyed with the
 * secret exactly as shown to the client (its UTF-8 bytes, `whsec_` included).
 */
export function billstreamSignature(secret: string, body: string): string {
  return bodySignature(secret, body);
}

/** The key of the Standard Webhooks signature: the base64-decoded part after `whsec_`. */
export function standardWebhooksKey(secret: string): Buffer {
  return Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
}

/** `webhook-signature`: `v1,` and the base64 HMAC-SHA256 of `<id>.<timestamp>.<body>`. */
export function standardWebhooksSignature(secret: string, id: string, timestampSeconds: number, body: string): string {
  const mac = createHmac('sha256', standardWebhooksKey(secret))
    .update(`${id}.${timestampSeconds}.${body}`, 'utf8')
    .digest('base64');
  return `v1,${mac}`;
}

/** Every header of one delivery attempt of the envelope `id` whose exact bytes are `body`. */
export function deliveryHeaders(secret: string, id: string, body: string, now: Date): Record<string, string> {
  const timestamp = Math.floor(now.getTime() / 1000);
  return {
    'content-type': 'application/json',
    'user-agent': 'Billstream-Webhooks/1',
    [SIGNATURE_HEADER.toLowerCase()]: billstreamSignature(secret, body),
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': standardWebhooksSignature(secret, id, timestamp, body),
  };
}
