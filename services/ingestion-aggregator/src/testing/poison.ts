import type { ConsumedMessage } from '@billstream/bus';

/** JSON nesting Postgres 15 refuses with its default 2 MB stack (54001: 20,000 levels already fail). */
export const TOO_DEEP = 100_000;

export interface PoisonRecord {
  kind: string;
  /** The Kafka value, as published (every one valid UTF-8: the bytes are what is dead-lettered). */
  value: string;
  /** The event id the dead letter keeps, null when the record has none that Postgres can store. */
  eventId: string | null;
  /** The error code its dead letter carries. */
  code: string;
}

/** A usage-events message as the gateway publishes it, for tenant-a/production. */
export function usageMessage(customer: string, eventId: string, fields: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    tenant_id: 'tenant-a',
    environment_id: 'production',
    event_id: eventId,
    event_name: 'api_call',
    external_customer_id: customer,
    timestamp: '2026-03-10T12:00:00.000000Z',
    properties: { tokens: 1 },
    source: null,
    received_at: '2026-03-10T12:00:01.000Z',
    ...fields,
  };
}

/** The Kafka key the gateway gives a customer's events. */
export const keyOf = (customer: string) => `tenant-a:production:${customer}`;

/**
 * One record of each kind the gateway refuses (or never produces) but Kafka carries: each
 * stopped its whole partition before dead-lettering (issue #11).
 */
export function poisonRecords(customer: string): PoisonRecord[] {
  const json = (id: string, fields: Record<string, unknown>) => JSON.stringify(usageMessage(customer, id, fields));
  const deep = `${'['.repeat(TOO_DEEP)}${']'.repeat(TOO_DEEP)}`;
  return [
    { kind: 'NUL in a property value', value: json('bad-nul-value', { properties: { note: 'x\u0000y' } }), eventId: 'bad-nul-value', code: '22P05' },
    { kind: 'NUL in a property key', value: json('bad-nul-key', { properties: { 'a\u0000b': 1 } }), eventId: 'bad-nul-key', code: '22P05' },
    { kind: 'NUL in the event name', value: json('bad-nul-name', { event_name: 'api\u0000call' }), eventId: 'bad-nul-name', code: '22P05' },
    { kind: 'lone surrogate', value: json('bad-lone', { properties: { s: 'x\ud800y' } }), eventId: 'bad-lone', code: '22P02' },
    { kind: 'reversed surrogate pair', value: json('bad-reversed', { properties: { s: '\udc00\ud800' } }), eventId: 'bad-reversed', code: '22P02' },
    { kind: 'lone surrogate in the event id', value: json('bad-id-\udfff', {}), eventId: null, code: '22P02' },
    {
      kind: `nesting ${TOO_DEEP} levels deep`,
      value: json('bad-deep', { properties: { deep: 0 } }).replace('"deep":0', `"deep":${deep}`),
      eventId: 'bad-deep',
      code: 'invalid_message',
    },
    { kind: 'number beyond numeric', value: json('bad-number', { properties: { n: 0 } }).replace('"n":0', '"n":1e999999'), eventId: 'bad-number', code: '22003' },
    { kind: 'not JSON (with a NUL byte)', value: 'not json \u0000 at all', eventId: null, code: 'invalid_json' },
    { kind: 'JSON failing the message schema', value: JSON.stringify({ tenant_id: 'tenant-a', environment_id: 'production', event_id: 'bad-schema' }), eventId: 'bad-schema', code: 'invalid_message' },
    { kind: 'a month that is no month', value: json('bad-month', { timestamp: '2026-13-01T00:00:00.000000Z' }), eventId: 'bad-month', code: 'invalid_message' },
  ];
}

/** Consumed messages of one partition, offsets from `first`, as the bus hands them to a handler. */
export function consumed(customer: string, values: string[], first = 0): ConsumedMessage[] {
  return values.map((value, i) => ({
    topic: 'usage-events',
    partition: 0,
    offset: String(first + i),
    key: keyOf(customer),
    value,
    headers: {},
  }));
}
