import { usageMessage } from '../testing/poison';
import { MAX_MESSAGE_DEPTH, nestsDeeperThan, parseUsageMessage } from './message';

const nested = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;

describe('nestsDeeperThan', () => {
  it('counts objects and arrays, not brackets inside strings or escaped quotes', () => {
    expect(nestsDeeperThan(nested(5), 5)).toBe(false);
    expect(nestsDeeperThan(nested(6), 5)).toBe(true);
    expect(nestsDeeperThan('{"a":{"b":[{"c":1}]}}', 4)).toBe(false);
    expect(nestsDeeperThan('{"a":{"b":[{"c":[]}]}}', 4)).toBe(true);
    const text = JSON.stringify({ s: '[[[[[[[[[[{{{{{{{{{{"\\' + '['.repeat(50), t: 'x"[[[[' });
    expect(nestsDeeperThan(text, 1)).toBe(false);
    expect(nestsDeeperThan(`[${text}]`, 1)).toBe(true);
  });
});

describe('parseUsageMessage', () => {
  const key = 'tenant-a:production:c';

  it('accepts what the gateway publishes', () => {
    const value = JSON.stringify(usageMessage('c', 'e-1'));
    expect(parseUsageMessage(key, value)).toEqual({ ok: true, event: JSON.parse(value) });
  });

  it('refuses, naming the owner: not JSON (owner from the key), the wrong shape, no real instant, too deep', () => {
    expect(parseUsageMessage(key, 'not json')).toMatchObject({
      ok: false,
      error: { code: 'invalid_json' },
      owner: { tenantId: 'tenant-a', environmentId: 'production' },
    });
    expect(parseUsageMessage('no-key', '{')).toMatchObject({ ok: false, owner: { tenantId: undefined, environmentId: undefined } });
    expect(parseUsageMessage(key, JSON.stringify({ ...usageMessage('c', 'e-2'), event_name: 7 }))).toEqual({
      ok: false,
      error: { code: 'invalid_message', message: expect.stringMatching(/^event_name: /) },
      owner: { tenantId: 'tenant-a', environmentId: 'production', eventId: 'e-2' },
    });
    for (const timestamp of ['2026-13-01T00:00:00.000000Z', '2026-02-30T00:00:00.000000Z', '2026-01-01T24:00:00.000000Z', '1969-12-31T23:59:59.000000Z']) {
      expect(parseUsageMessage(key, JSON.stringify(usageMessage('c', 'e-3', { timestamp })))).toMatchObject({
        ok: false,
        error: { code: 'invalid_message', message: 'timestamp: is not a storable instant' },
      });
    }
    // The message is level 1 and properties level 2.
    const withDepth = (levels: number) =>
      JSON.stringify(usageMessage('c', 'e-4', { properties: { d: 0 } })).replace('"d":0', `"d":${nested(levels - 2)}`);
    expect(parseUsageMessage(key, withDepth(MAX_MESSAGE_DEPTH))).toMatchObject({ ok: true });
    const beyond = withDepth(MAX_MESSAGE_DEPTH + 1);
    expect(parseUsageMessage(key, beyond)).toEqual({
      ok: false,
      error: { code: 'invalid_message', message: `nested deeper than ${MAX_MESSAGE_DEPTH} levels of objects and arrays` },
      owner: { tenantId: 'tenant-a', environmentId: 'production', eventId: 'e-4' },
    });
  });
});
