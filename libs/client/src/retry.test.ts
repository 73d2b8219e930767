import { createClient } from './client';
import { backoffMs, isRetriedStatus, isSafeToRepeat, retryAfterMs, retryAfterSeconds } from './retry';

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

describe('isRetriedStatus', () => {
  it.each([
    [429, true],
    [500, true],
    [502, true],
    [503, true],
    [504, true],
    [599, true],
    [400, false],
    [404, false],
    [409, false],
    [422, false],
  ])('%s: %s', (status, retried) => {
    expect(isRetriedStatus(status)).toBe(retried);
  });
});

describe('a call that is safe to repeat, through createClient (issue #53: every 5xx retried)', () => {
  const envelope = (status: number) =>
    new Response(JSON.stringify({ error: { code: 'error', internal_error: status === 500 ? 'internal_error' : 'service_unavailable', message: 'boom', details: {} } }), {
      status,
      headers: { 'content-type': 'application/json' },
    });
  function serve(statuses: number[]): { fetch: typeof fetch; seen: Array<{ url: string; requestId: string | null }> } {
    const seen: Array<{ url: string; requestId: string | null }> = [];
    const plan = [...statuses];
    const answer = async (input: Parameters<typeof fetch>[0], init?: RequestInit): Promise<Response> => {
      seen.push({ url: String(input instanceof Request ? input.url : input), requestId: new Headers(init?.headers).get('x-request-id') });
      const status = plan.shift() ?? 200;
      return status === 200 ? new Response(JSON.stringify({ id: 'cust_1' }), { status: 200, headers: { 'content-type': 'application/json' } }) : envelope(status);
    };
    return { fetch: answer as typeof fetch, seen };
  }

  it('is tried again after a 500, a 502 and a 504, with one request id', async () => {
    const { fetch, seen } = serve([500, 502, 504]);
    const retries: number[] = [];
    const client = createClient({ apiKey: 'k', baseUrl: 'http://127.0.0.1:1', fetch, retry: { baseDelayMs: 1, maxDelayMs: 2 }, onRetry: (i) => retries.push(i.error.status) });
    const res = await client.GET('/v1/customers/{id}', { params: { path: { id: 'cust_1' } } });
    expect(res).toMatchObject({ id: 'cust_1' });
    expect(retries).toEqual([500, 502, 504]);
    expect(new Set(seen.map((s) => s.requestId)).size).toBe(1);
  });

  it('throws a 500 that repeats after its attempts, and never repeats a create without a key', async () => {
    const repeated = serve([500, 500, 500, 500, 500]);
    const client = createClient({ apiKey: 'k', baseUrl: 'http://127.0.0.1:1', fetch: repeated.fetch, retry: { baseDelayMs: 1, maxDelayMs: 2 } });
    await expect(client.GET('/v1/customers/{id}', { params: { path: { id: 'cust_1' } } })).rejects.toMatchObject({ status: 500, attempts: 4 });
    expect(repeated.seen).toHaveLength(4);
    const once = serve([500]);
    const creating = createClient({ apiKey: 'k', baseUrl: 'http://127.0.0.1:1', fetch: once.fetch, retry: { baseDelayMs: 1, maxDelayMs: 2 } });
    await expect(creating.POST('/v1/customers', { body: { external_customer_id: 'c' } as never })).rejects.toMatchObject({ status: 500 });
    expect(once.seen).toHaveLength(1);
  });
});
