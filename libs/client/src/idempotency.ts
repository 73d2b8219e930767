/**
 * Keys that make writes safe to repeat, added before the first attempt so every retry sends
 * the same body: an `idempotency_key` on every top-up, debit, payment and reservation, an `event_id` on
 * every usage event, unless the caller gave one.
 */
import { randomUUID } from 'node:crypto';

const KEYED_WRITES = [/^\/v1\/wallets\/[^/]+\/topup$/, /^\/v1\/wallets\/[^/]+\/debit$/, /^\/v1\/payments$/, /^\/v1\/reservations$/];

/** Writes the API answers the same when repeated, without a key: a reservation's commit (same credits) and release. */
const IDEMPOTENT_POSTS = [/^\/v1\/reservations\/[^/]+\/(commit|release)$/];

/** Whether a POST to `path` (its template or filled in) is safe to retry as it is. */
export function isIdempotentPost(method: string, path: string): boolean {
  return method.toUpperCase() === 'POST' && IDEMPOTENT_POSTS.some((pattern) => pattern.test(path));
}

/**
 * The body to send: `body` itself, or a copy with the missing key or event ids filled in. A
 * keyed write whose caller sent the `Idempotency-Key` header (`headerKey`) gets that key in
 * the body, not a new one: the API takes both when they are equal (ADR 0035).
 */
export function withIdempotency(method: string, path: string, body: unknown, newKey: () => string = randomUUID, headerKey?: string): unknown {
  if (method.toUpperCase() !== 'POST' || typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  const record = body as Record<string, unknown>;
  if (KEYED_WRITES.some((pattern) => pattern.test(path))) {
    return record.idempotency_key === undefined ? { ...record, idempotency_key: headerKey ?? newKey() } : body;
  }
  if (path === '/v1/events') return withEventId(record, newKey);
  if (path === '/v1/events/bulk' && Array.isArray(record.events)) {
    const events = record.events as unknown[];
    if (events.every((e) => !isRecord(e) || e.event_id !== undefined)) return body;
    return { ...record, events: events.map((e) => (isRecord(e) ? withEventId(e, newKey) : e)) };
  }
  return body;
}

export function withEventId<T extends object>(event: T, newKey: () => string = randomUUID): T & { event_id: string } {
  const record = event as T & { event_id?: unknown };
  return (record.event_id === undefined ? { ...event, event_id: newKey() } : event) as T & { event_id: string };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
