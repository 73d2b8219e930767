import { normalizeEventTimestamp } from '@billstream/contracts';
import { ValidationError } from '@billstream/errors';
import { messageKey, toMessage } from './publisher';
import { validateBulk } from './routes';

const scope = { tenantId: 't1', environmentId: 'prod' };

describe('normalizeEventTimestamp', () => {
  it.each([
    ['2026-01-02T03:04:05Z', '2026-01-02T03:04:05.000000Z'],
    ['2026-01-02T03:04:05.1Z', '2026-01-02T03:04:05.100000Z'],
    ['2026-01-02T03:04:05.123456789Z', '2026-01-02T03:04:05.123456Z'],
    ['2026-01-02T03:04:05.5+02:00', '2026-01-02T01:04:05.500000Z'],
    ['2026-01-02T00:30:00-0130', '2026-01-02T02:00:00.000000Z'],
    ['2026-12-31T23:00:00-02:00', '2027-01-01T01:00:00.000000Z'],
    ['2026-01-01T24:00:00Z', '2026-01-02T00:00:00.000000Z'],
    ['2024-02-29T12:00:00Z', '2024-02-29T12:00:00.000000Z'],
    ['2000-02-29T23:59:59.999999Z', '2000-02-29T23:59:59.999999Z'],
  ])('%s -> %s', (input, expected) => {
    expect(normalizeEventTimestamp(input)).toBe(expected);
  });

  it.each(['2026-02-30T00:00:00Z', '2026-13-01T00:00:00Z', '2026-01-01T23:60:00Z', '2026-01-01T23:59:60Z'])('refuses %s', (input) => {
    expect(() => normalizeEventTimestamp(input)).toThrow();
  });
});

describe('event timestamps in requests', () => {
  const event = (timestamp: string) => ({ event_name: 'e', external_customer_id: 'c', timestamp });
  it.each(['2026-02-29T00:00:00Z', '1900-02-29T00:00:00Z', '2026-04-31T00:00:00Z', '2026-00-10T00:00:00Z'])('refuses the non-date %s', (ts) => {
    expect(() => validateBulk([event(ts)])).toThrow(ValidationError);
  });
  it.each(['2024-02-29T00:00:00Z', '2000-02-29T00:00:00Z', '2026-12-31T23:59:59Z'])('accepts %s', (ts) => {
    expect(() => validateBulk([event(ts)])).not.toThrow();
  });
});

describe('toMessage', () => {
  it('stamps scope, receipt time and a UUID when the event has no id, and keys by customer', () => {
    const m = toMessage({ event_name: 'e', external_customer_id: 'c', timestamp: '2026-01-01T00:00:00Z' }, scope, '2026-01-01T00:00:01.000Z');
    expect(m).toEqual({
      tenant_id: 't1',
      environment_id: 'prod',
      event_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      event_name: 'e',
      external_customer_id: 'c',
      timestamp: '2026-01-01T00:00:00.000000Z',
      properties: {},
      source: null,
      received_at: '2026-01-01T00:00:01.000Z',
    });
    expect(messageKey(m)).toBe('t1:prod:c');
    const again = toMessage({ event_name: 'e', external_customer_id: 'c', timestamp: '2026-01-01T00:00:00Z' }, scope, 'x');
    expect(again.event_id).not.toBe(m.event_id);
  });

  it('keeps a client event_id', () => {
    expect(toMessage({ event_name: 'e', external_customer_id: 'c', timestamp: '2026-01-01T00:00:00Z', event_id: 'mine' }, scope, 'x').event_id).toBe('mine');
  });
});

describe('validateBulk', () => {
  const good = { event_name: 'e', external_customer_id: 'c', timestamp: '2026-01-01T00:00:00Z' };

  it('names the index and field of the first bad event', () => {
    let caught: unknown;
    try {
      validateBulk([good, good, { ...good, properties: [1] }, { ...good, timestamp: 'x' }]);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ValidationError);
    expect((caught as ValidationError).details).toMatchObject({ index: 2, field: 'events.2.properties', event_field: 'properties' });
  });

  it('names a missing field and an element that is not an object', () => {
    expect(() => validateBulk([{ event_name: 'e', timestamp: '2026-01-01T00:00:00Z' }])).toThrow(
      expect.objectContaining({ details: expect.objectContaining({ index: 0, field: 'events.0.external_customer_id' }) }),
    );
    expect(() => validateBulk([good, 'nope'])).toThrow(expect.objectContaining({ details: expect.objectContaining({ index: 1, field: 'events.1' }) }));
  });

  it('refuses NUL characters, which Postgres cannot store', () => {
    expect(() => validateBulk([{ ...good, properties: { a: 'x\u0000y' } }])).toThrow(
      expect.objectContaining({ details: expect.objectContaining({ field: 'events.0.properties' }) }),
    );
    expect(() => validateBulk([{ ...good, event_name: 'a\u0000' }])).toThrow(
      expect.objectContaining({ details: expect.objectContaining({ field: 'events.0.event_name' }) }),
    );
  });
});
