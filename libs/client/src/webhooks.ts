/**
 * Verifies a webhook delivery and returns its typed envelope. Billstream signs every delivery
 * twice (docs/api/webhooks.md): `X-Billstream-Signature`, the hex HMAC-SHA256 of the raw body
 * keyed with the whole `whsec_` secret, and the Standard Webhooks `webhook-signature`, the
 * base64 HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>` keyed with the base64 part
 * of the secret. Both must match: the second binds the timestamp, so a delivery replayed
 * outside `toleranceSeconds` fails even though its body is unchanged.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { components } from './generated/openapi';
import type { RequestBody, ResponseBody } from './types';

const SECRET_PREFIX = 'whsec_';
export const SIGNATURE_HEADER = 'x-billstream-signature';
const DEFAULT_TOLERANCE_SECONDS = 300;

export type WebhookEventName = Exclude<RequestBody<'/v1/webhook-endpoints', 'post'>['events'][number], '*'>;

export type Customer = ResponseBody<'/v1/customers/{id}', 'get'>;
export type Wallet = ResponseBody<'/v1/wallets/{id}', 'get'>;
export type WalletTransaction = ResponseBody<'/v1/wallets/{id}/topup', 'post'>;
export type Invoice = components['schemas']['Invoice'];
export type Subscription = components['schemas']['Subscription'];
export type Payment = components['schemas']['Payment'];

/** `alert` of the wallet balance alert events. */
export interface BalanceAlert {
  kind: 'credit_balance' | 'ongoing_balance';
  state: 'ok' | 'info' | 'warning' | 'critical';
  previous_state: 'ok' | 'info' | 'warning' | 'critical';
  balance: string;
  threshold: string | null;
}

type InvoiceEvent = Extract<WebhookEventName, `invoice.${string}`>;
type SubscriptionEvent = Extract<WebhookEventName, `subscription.${string}`>;
type AlertEvent = Extract<WebhookEventName, `wallet.${'credit_balance' | 'ongoing_balance'}.${string}`>;

/** The payload of each event name Billstream publishes today, keyed by the resource name. */
export type WebhookPayloads = { [N in 'customer.created' | 'customer.updated' | 'customer.deleted']: { customer: Customer } } & {
  [N in 'wallet.created' | 'wallet.updated' | 'wallet.terminated']: { wallet: Wallet };
} & {
  [N in 'reservation.created' | 'reservation.committed' | 'reservation.released' | 'reservation.expired']: { reservation: ResponseBody<'/v1/reservations/{id}', 'get'> };
} & { 'wallet.transaction.created': { transaction: WalletTransaction } } & { [N in AlertEvent]: { wallet: Wallet; alert: BalanceAlert } } & {
  [N in InvoiceEvent]: { invoice: Invoice };
} & { [N in SubscriptionEvent]: { subscription: Subscription } } & { 'payment.success': { payment: Payment } };

/** The payload of a test delivery (`POST /v1/webhook-endpoints/{id}/test`), whatever its event name. */
export interface WebhookTestPayload {
  test: true;
  webhook_endpoint_id: string;
}

export type WebhookPayload<N extends WebhookEventName> = (N extends keyof WebhookPayloads ? WebhookPayloads[N] : Record<string, unknown>) | WebhookTestPayload;

/** The envelope of a delivery; narrowing on `event_name` types `payload`. */
export type WebhookEnvelope<N extends WebhookEventName = WebhookEventName> = {
  [K in N]: {
    id: string;
    event_name: K;
    tenant_id: string;
    environment_id: string;
    user_id: string;
    timestamp: string;
    payload: WebhookPayload<K>;
  };
}[N];

export function isTestPayload(payload: object): payload is WebhookTestPayload {
  return (payload as Partial<WebhookTestPayload>).test === true;
}

export class WebhookVerificationError extends Error {
  constructor(
    message: string,
    readonly reason: 'missing_header' | 'bad_signature' | 'timestamp_out_of_tolerance' | 'bad_secret' | 'bad_body',
  ) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}

/** Request headers as Node (`req.headers`) or fetch (`Headers`) give them. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export interface VerifyOptions {
  /** Largest allowed distance between `webhook-timestamp` and now (default 300 s). */
  toleranceSeconds?: number;
  /** Now, for tests (default: the clock). */
  now?: Date;
}

/**
 * Checks both signatures of a delivery in constant time and the timestamp against replay,
 * then parses the body. `rawBody` must be the exact bytes received (not re-serialised JSON).
 * Throws a WebhookVerificationError when anything does not hold.
 */
export function verifyWebhook(rawBody: string | Uint8Array, headers: WebhookHeaders, secret: string, options: VerifyOptions = {}): WebhookEnvelope {
  if (!secret.startsWith(SECRET_PREFIX)) throw new WebhookVerificationError('The secret must be the whsec_ secret of the endpoint', 'bad_secret');
  const body = Buffer.from(typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody);
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  const billstream = header(headers, SIGNATURE_HEADER);

  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const seconds = /^\d+$/.test(timestamp) ? Number(timestamp) : NaN;
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
  if (!Number.isFinite(seconds) || Math.abs(now - seconds) > tolerance) {
    throw new WebhookVerificationError(`webhook-timestamp ${timestamp} is more than ${tolerance} s from now`, 'timestamp_out_of_tolerance');
  }

  const expectedHex = createHmac('sha256', Buffer.from(secret, 'utf8')).update(body).digest();
  if (!/^[0-9a-fA-F]{64}$/.test(billstream) || !timingSafeEqual(Buffer.from(billstream, 'hex'), expectedHex)) {
    throw new WebhookVerificationError(`${SIGNATURE_HEADER} does not match the body`, 'bad_signature');
  }

  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest();
  // Several space-separated `v1,<base64>` entries may be sent while a secret is rotated.
  const matches = signatures.split(' ').some((entry) => {
    const [version, value] = entry.split(',', 2);
    if (version !== 'v1' || !value) return false;
    const given = Buffer.from(value, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!matches) throw new WebhookVerificationError('webhook-signature does not match the id, timestamp and body', 'bad_signature');

  let envelope: unknown;
  try {
    envelope = JSON.parse(body.toString('utf8'));
  } catch {
    throw new WebhookVerificationError('The body is not JSON', 'bad_body');
  }
  if (typeof envelope !== 'object' || envelope === null || (envelope as { id?: unknown }).id !== id) {
    throw new WebhookVerificationError('The envelope id is not the webhook-id', 'bad_body');
  }
  return envelope as WebhookEnvelope;
}

function header(headers: WebhookHeaders, name: string): string {
  let value: string | string[] | null | undefined;
  if (typeof (headers as Headers).get === 'function') {
    value = (headers as Headers).get(name);
  } else {
    const record = headers as Record<string, string | string[] | undefined>;
    const key = Object.keys(record).find((k) => k.toLowerCase() === name);
    value = key === undefined ? undefined : record[key];
  }
  const text = Array.isArray(value) ? value[0] : value;
  if (typeof text !== 'string' || text === '') throw new WebhookVerificationError(`The ${name} header is missing`, 'missing_header');
  return text;
}
