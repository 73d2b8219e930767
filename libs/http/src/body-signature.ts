import { createHmac } from 'node:crypto';

/**
 * The signature of a body we send to a client's server: lower-case hex HMAC-SHA256 of the raw
 * body, keyed with the UTF-8 bytes of the secret exactly as the client gave or was shown it.
 * Webhook deliveries carry it as `X-Billstream-Signature` (docs/api/webhooks.md), the HTTP tax
 * provider's requests as `X-Service-Signature` (docs/api/taxes.md#http-provider).
 */
export function bodySignature(secret: string, body: string): string {
  return createHmac('sha256', Buffer.from(secret, 'utf8')).update(body, 'utf8').digest('hex');
}

/** The header of a request to the HTTP tax provider that carries `bodySignature`. */
export const SERVICE_SIGNATURE_HEADER = 'X-Service-Signature';
