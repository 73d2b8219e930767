import { waitFor } from '@billstream/testing';
import { startIntegrationStack, type IntegrationStack } from '../../support/stack';

const DAY1 = '2026-04-01';
const DAY2 = '2026-04-02';

function ev(id: string, timestamp: string, properties: Record<string, unknown>, overrides: Record<string, unknown> = {}) {
  return { event_id: id, event_name: 'storage', external_customer_id: 'acme', timestamp, properties, ...overrides };
}

describe('meters and usage (real Kafka and Postgres)', () => {
  let stack: IntegrationStack;

  beforeAll(async () => {
    stack = await startIntegrationStack();
    const events = [
      ev('u1', `${DAY1}T10:15:00Z`, { gb: 1.5, region: 'eu', user: 'ann' }),
      ev('u2', `${DAY1}T10:45:00Z`, { gb: '2.25', region: 'us', user: 'bob' }),
      ev('u3', `${DAY1}T11:05:00Z`, { gb: 0.1, region: 'eu', user: 'ann' }),
      ev('u4', `${DAY1}T11:30:00Z`, { gb: 0.2, region: 'eu', user: 'cid' }),
      ev('u5', `${DAY2}T09:00:00+02:00`, { gb: 4, region: 'eu', user: 'ann' }),
      ev('u6', `${DAY2}T12:00:00Z`, { gb: 'n/a', region: 'eu', user: 'dan' }),
      ev('u7', `${DAY1}T10:20:00Z`, { gb: 100 }, { event_name: 'other' }),
      ev('u8', `${DAY1}T10:20:00Z`, { gb: 100 }, { external_customer_id: 'someone-else' }),
      ev('u1', `${DAY1}T10:15:00Z`, { gb: 1000 }),
    ];
    expect((await stack.api.post('/v1/events/bulk', { events })).status).toBe(202);
    await waitFor(
      async () => (await stack.api.post('/v1/events/query', { event_name: 'storage' })).body.total_count === 7,
      { what: 'events stored' },
    );
  });
  afterAll(async () => {
    await stack?.stop();
  });

  async function meter(aggregation: Record<string, unknown>, filters?: unknown) {
    const res = await stack.api.post('/v1/meters', { name: `m ${JSON.stringify(aggregation)}`, event_name: 'storage', aggregation, filters });
    expect(res.status).toBe(201);
    return res.body as { id: string };
  }

  async function usage(id: string, body: Record<string, unknown>) {
    const res = await stack.api.post(`/v1/meters/${id}/usage`, {
      external_customer_id: 'acme',
      start_time: `${DAY1}T00:00:00Z`,
      end_time: '2026-04-03T00:00:00Z',
      ...body,
    });
    expect(res.status).toBe(200);
    return res.body as { meter_id: string; value: string; windows: Array<{ start: string; end: string; value: string }> };
  }

  it('creates, reads and lists meters', async () => {
    const created = await stack.api.post('/v1/meters', {
      name: 'Storage',
      event_name: 'storage',
      aggregation: { type: 'SUM', field: 'gb' },
      filters: [{ key: 'region', values: ['eu'] }],
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^meter_[0-9A-Z]{26}$/),
      name: 'Storage',
      event_name: 'storage',
      aggregation: { type: 'SUM', field: 'gb' },
      filters: [{ key: 'region', values: ['eu'] }],
      tenant_id: 'tenant-a',
      environment_id: 'production',
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const got = await stack.api.get(`/v1/meters/${created.body.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(created.body);
    const second = await meter({ type: 'COUNT' });
    const list = await stack.api.get('/v1/meters?limit=1&offset=0');
    expect(list.status).toBe(200);
    expect(list.body.pagination).toEqual({ total: expect.any(Number), limit: 1, offset: 0 });
    expect(list.body.items).toHaveLength(1);
    expect(list.body.items[0].id).toBe(created.body.id);
    const all = await stack.api.get('/v1/meters');
    expect(all.body.items.map((m: { id: string }) => m.id)).toEqual(expect.arrayContaining([created.body.id, second.id]));
    const other = stack.api.withKey(await stack.keyFor('tenant-b', 'production'));
    expect((await other.get(`/v1/meters/${created.body.id}`)).status).toBe(404);
    expect((await other.get('/v1/meters')).body.items).toEqual([]);
  });

  it('refuses bad meters with 400 naming the field, and unknown meters with 404', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ event_name: 'e', aggregation: { type: 'COUNT' } }, 'name'],
      [{ name: 'n', aggregation: { type: 'COUNT' } }, 'event_name'],
      [{ name: 'n', event_name: 'e', aggregation: { type: 'AVERAGE', field: 'x' } }, 'aggregation.type'],
      [{ name: 'n', event_name: 'e', aggregation: { type: 'SUM' } }, 'aggregation.field'],
      [{ name: 'n', event_name: 'e' }, 'aggregation'],
      [{ name: 'n', event_name: 'e', aggregation: { type: 'COUNT' }, filters: [{ key: 'a' }] }, 'filters.0.values'],
      [{ name: 'n', event_name: 'e', aggregation: { type: 'COUNT' }, extra: 1 }, 'extra'],
    ];
    for (const [body, field] of cases) {
      const res = await stack.api.post('/v1/meters', body);
      expect({ body, status: res.status }).toEqual({ body, status: 400 });
      expect(res.body.error).toMatchObject({ internal_error: 'validation_error', details: { field } });
    }
    const missing = await stack.api.get('/v1/meters/meter_01J00000000000000000000000');
    expect(missing.status).toBe(404);
    expect(missing.body.error.internal_error).toBe('not_found');
    const missingUsage = await stack.api.post('/v1/meters/meter_01J00000000000000000000000/usage', {
      external_customer_id: 'acme',
      start_time: `${DAY1}T00:00:00Z`,
      end_time: `${DAY2}T00:00:00Z`,
    });
    expect(missingUsage.status).toBe(404);
    const m = await meter({ type: 'COUNT' });
    const badUsage: Array<[Record<string, unknown>, string]> = [
      [{ start_time: `${DAY1}T00:00:00Z`, end_time: `${DAY2}T00:00:00Z` }, 'external_customer_id'],
      [{ external_customer_id: 'acme', start_time: `${DAY1}T00:00:00`, end_time: `${DAY2}T00:00:00Z` }, 'start_time'],
      [{ external_customer_id: 'acme', start_time: `${DAY2}T00:00:00Z`, end_time: `${DAY1}T00:00:00Z` }, 'end_time'],
      [{ external_customer_id: 'acme', start_time: `${DAY1}T00:00:00Z`, end_time: `${DAY2}T00:00:00Z`, window_size: 'WEEK' }, 'window_size'],
      [{ external_customer_id: 'acme', start_time: '2000-01-01T00:00:00Z', end_time: `${DAY2}T00:00:00Z`, window_size: 'HOUR' }, 'window_size'],
    ];
    for (const [body, field] of badUsage) {
      const res = await stack.api.post(`/v1/meters/${m.id}/usage`, body);
      expect({ body, status: res.status }).toEqual({ body, status: 400 });
      expect(res.body.error.details.field).toBe(field);
    }
  });

  it('aggregates COUNT, SUM, MAX, UNIQUE_COUNT and LATEST over the customer and range, exactly', async () => {
    expect((await usage((await meter({ type: 'COUNT' })).id, {})).value).toBe('6');
    const sum = await meter({ type: 'SUM', field: 'gb' });
    const s = await usage(sum.id, {});
    expect(s).toEqual({ meter_id: sum.id, value: '8.05', windows: [] });
    expect((await usage((await meter({ type: 'MAX', field: 'gb' })).id, {})).value).toBe('4');
    expect((await usage((await meter({ type: 'UNIQUE_COUNT', field: 'user' })).id, {})).value).toBe('4');
    expect((await usage((await meter({ type: 'LATEST', field: 'gb' })).id, {})).value).toBe('4');
    const partial = await usage(sum.id, { start_time: `${DAY1}T10:30:00Z`, end_time: `${DAY1}T11:30:00Z` });
    expect(partial.value).toBe('2.35');
    expect((await usage(sum.id, { external_customer_id: 'nobody' })).value).toBe('0');
  });

  it('applies property filters', async () => {
    const eu = await meter({ type: 'SUM', field: 'gb' }, [{ key: 'region', values: ['eu'] }]);
    expect((await usage(eu.id, {})).value).toBe('5.8');
    const both = await meter({ type: 'COUNT' }, [
      { key: 'region', values: ['eu', 'us'] },
      { key: 'user', values: ['ann'] },
    ]);
    expect((await usage(both.id, {})).value).toBe('3');
  });

  it("applies a call's filter_values on top of the meter's filters (a billing price's), and refuses bad ones", async () => {
    const sum = await meter({ type: 'SUM', field: 'gb' });
    expect((await usage(sum.id, { filter_values: { region: ['eu'] } })).value).toBe('5.8');
    expect((await usage(sum.id, { filter_values: { region: ['eu', 'us'], user: ['ann'] } })).value).toBe('5.6');
    const eu = await meter({ type: 'SUM', field: 'gb' }, [{ key: 'region', values: ['eu'] }]);
    expect((await usage(eu.id, { filter_values: { region: ['us'] } })).value).toBe('0');
    const bad = await stack.api.post(`/v1/meters/${sum.id}/usage`, {
      external_customer_id: 'acme',
      start_time: `${DAY1}T00:00:00Z`,
      end_time: `${DAY2}T00:00:00Z`,
      filter_values: { region: [] },
    });
    expect([bad.status, bad.body.error.details.field]).toEqual([400, 'filter_values.region']);
  });

  it('splits usage into hourly and daily UTC windows, clipped to the range', async () => {
    const sum = await meter({ type: 'SUM', field: 'gb' });
    const hourly = await usage(sum.id, { start_time: `${DAY1}T09:30:00Z`, end_time: `${DAY1}T12:00:00Z`, window_size: 'HOUR' });
    expect(hourly.value).toBe('4.05');
    expect(hourly.windows).toEqual([
      { start: `${DAY1}T09:30:00.000000Z`, end: `${DAY1}T10:00:00.000000Z`, value: '0' },
      { start: `${DAY1}T10:00:00.000000Z`, end: `${DAY1}T11:00:00.000000Z`, value: '3.75' },
      { start: `${DAY1}T11:00:00.000000Z`, end: `${DAY1}T12:00:00.000000Z`, value: '0.3' },
    ]);
    const unique = await meter({ type: 'UNIQUE_COUNT', field: 'user' });
    const daily = await usage(unique.id, { window_size: 'DAY' });
    expect(daily.value).toBe('4');
    expect(daily.windows).toEqual([
      { start: `${DAY1}T00:00:00.000000Z`, end: `${DAY2}T00:00:00.000000Z`, value: '3' },
      { start: `${DAY2}T00:00:00.000000Z`, end: '2026-04-03T00:00:00.000000Z', value: '2' },
    ]);
  });

  it('does not route the internal usage batch (billing calls the aggregator directly)', async () => {
    const m = await meter({ type: 'COUNT' });
    const body = { queries: [{ meter_id: m.id, external_customer_id: 'acme', start_time: `${DAY1}T00:00:00Z`, end_time: `${DAY2}T00:00:00Z` }] };
    for (const path of ['/internal/v1/usage/batch', '/v1/usage/batch']) {
      const res = await stack.api.post(path, body);
      expect([path, res.status, res.body.success, res.body.error.internal_error]).toEqual([path, 404, false, 'not_found']);
    }
  });
});
