import { backoffMs, isSafeToRepeat, retryAfterMs, retryAfterSeconds } from './retry';

describe('isSafeToRepeat', () => {
  it.each([
    ['GET', undefined, true],
    ['POST', { name: 'x' }, false],
    ['POST', { credits: '1', idempotency_key: 'k' }, true],
    ['POST', { credits: '1', idempotency_key: '' }, false],
    ['PUT', { idempotency_key: 'k' }, true],
    ['PATCH', { idempotency_key: 'k' }, false],
    ['DELETE', undefined, false],
    ['POST', { event_name: 'e', event_id: 'id-1' }, true],
    ['POST', { events: [{ event_id: 'a' }, { event_id: 'b' }] }, true],
    ['POST', { events: [{ event_id: 'a' }, { event_name: 'no id' }] }, false],
    ['POST', { events: [] }, false],
  ])('%s %j: %s', (method, body, safe) => {
    expect(isSafeToRepeat(method, body)).toBe(safe);
  });
});

describe('backoffMs', () => {
  const options = { baseDelayMs: 100, maxDelayMs: 1000 };
  it('grows exponentially up to the cap, with full jitter below it', () => {
    expect([1, 2, 3, 4, 5, 6].map((a) => backoffMs(a, options, () => 0.999999))).toEqual([99, 199, 399, 799, 999, 999]);
    expect(backoffMs(3, options, () => 0)).toBe(0);
    const seen = new Set(Array.from({ length: 50 }, () => backoffMs(4, options)));
    expect(seen.size).toBeGreaterThan(10);
    for (const wait of seen) expect(wait).toBeLessThan(800);
  });
});

describe('Retry-After', () => {
  it('reads whole seconds and HTTP dates, and adds at most one base delay of jitter', () => {
    const now = Date.parse('2026-11-26T12:00:00Z');
    expect(retryAfterSeconds('2', now)).toBe(2);
    expect(retryAfterSeconds('Thu, 26 Nov 2026 12:00:05 GMT', now)).toBe(5);
    expect(retryAfterSeconds('Thu, 26 Nov 2026 11:00:00 GMT', now)).toBe(0);
    expect(retryAfterSeconds(null, now)).toBeUndefined();
    expect(retryAfterSeconds('soon', now)).toBeUndefined();
    expect(retryAfterMs('3', 200, now, () => 0.5)).toBe(3100);
    expect(retryAfterMs(null, 200, now)).toBeUndefined();
  });
});
