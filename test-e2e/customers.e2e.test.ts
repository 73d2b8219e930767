import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { KafkaBus, TOPICS, type ConsumedMessage, type Subscription } from '@billstream/bus';
import { kafkaBrokers, testLogger, waitFor, type ApiClient } from '@billstream/testing';
import { startProcessStack, type ProcessStack } from './support/stack';

const ROOT = path.resolve(__dirname, '..');

describe('customers through the gateway, the services as separate processes (real Postgres and Kafka)', () => {
  let stack: ProcessStack;
  let api: ApiClient;
  let bus: KafkaBus;
  let subscription: Subscription;
  const seen: ConsumedMessage[] = [];
  const run = Date.now().toString(36);

  /** A key of another tenant, issued with the CLI against the stack's database. */
  const cliKey = (tenant: string, environment: string): string => {
    const result = spawnSync(
      process.execPath,
      [path.join(ROOT, 'services/gateway/dist/apikey-cli.js'), 'create', '--tenant', tenant, '--environment', environment],
      { env: { ...process.env, DATABASE_URL: stack.database.url }, encoding: 'utf8', timeout: 30_000 },
    );
    const key = /Key \(shown once\): (\S+)/.exec(result.stdout)?.[1];
    if (!key) throw new Error(`apikey CLI failed: ${result.stderr}`);
    return key;
  };

  beforeAll(async () => {
    stack = await startProcessStack();
    api = stack.api;
    bus = new KafkaBus({ brokers: kafkaBrokers(), clientId: 'customers-e2e', logger: testLogger(), topicPrefix: stack.topicPrefix });
    await bus.start();
    subscription = await bus.subscribe({
      groupId: 'customers-e2e',
      topics: [TOPICS.customerEvents],
      handler: async (messages) => {
        seen.push(...messages);
      },
    });
  }, 120_000);
  afterAll(async () => {
    await subscription?.stop();
    await bus?.stop();
    await stack?.stop();
  });

  it('creates, reads, updates with If-Match and deletes a customer; each change reaches customer-events', async () => {
    const created = await api.post('/v1/customers', {
      external_customer_id: `e2e-${run}`,
      name: 'E2E Inc',
      email: 'e2e@x.example',
      metadata: { source: 'e2e' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ external_id: `e2e-${run}`, status: 'published', parent_customer_id: null });
    expect(created.headers.etag).toBe('"1"');
    const id = created.body.id;

    const read = await api.get(`/v1/customers/${id}`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(created.body);
    expect(read.headers.etag).toBe('"1"');
    expect((await api.get(`/v1/customers/external/e2e-${run}`)).body).toEqual(created.body);

    const updated = await api.put(`/v1/customers/${id}`, { status: 'archived' }, { 'if-match': '"1"' });
    expect(updated.status).toBe(200);
    expect(updated.headers.etag).toBe('"2"');
    const stale = await api.put(`/v1/customers/${id}`, { status: 'draft' }, { 'if-match': '"1"' });
    expect(stale.status).toBe(409);
    expect(stale.body.error.internal_error).toBe('version_conflict');
    const byExternal = await api.put(`/v1/customers?external_customer_id=e2e-${run}`, { name: 'E2E Ltd' });
    expect(byExternal.status).toBe(200);
    expect(byExternal.body).toMatchObject({ id, name: 'E2E Ltd', status: 'archived' });

    const deleted = await api.delete(`/v1/customers/${id}`);
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expect((await api.get(`/v1/customers/${id}`)).status).toBe(404);

    const events = await waitFor(() => {
      const mine = seen.filter((m) => m.key === id).map((m) => JSON.parse(m.value));
      return mine.length >= 4 ? mine : undefined;
    }, { what: 'four customer events', timeoutMs: 20_000 });
    expect(events.map((e) => e.type)).toEqual(['customer.created', 'customer.updated', 'customer.updated', 'customer.deleted']);
    expect(events[0].payload.customer).toEqual(created.body);
    expect(events[3].payload.customer).toEqual(byExternal.body);
  });

  it('gives exactly one 201 for concurrent creates with one external id', async () => {
    const results = await Promise.all(
      Array.from({ length: 25 }, () => api.post('/v1/customers', { external_customer_id: `race-${run}` })),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    expect(results.filter((r) => r.status === 409 && r.body.error.internal_error === 'already_exists')).toHaveLength(24);
  });

  it('enforces the rules: email, parent, cycle, children, bad list queries', async () => {
    const bad = await api.post('/v1/customers', { external_customer_id: `bad-${run}`, email: 'nope' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.field).toBe('email');
    const orphan = await api.post('/v1/customers', { external_customer_id: `orphan-${run}`, parent_customer_id: 'cust_none' });
    expect(orphan.status).toBe(404);
    expect(orphan.body.error.details.field).toBe('parent_customer_id');

    const parent = (await api.post('/v1/customers', { external_customer_id: `parent-${run}` })).body;
    const child = (await api.post('/v1/customers', { external_customer_id: `child-${run}`, parent_customer_id: parent.id })).body;
    expect((await api.put(`/v1/customers/${parent.id}`, { parent_customer_id: child.id })).status).toBe(400);
    expect((await api.delete(`/v1/customers/${parent.id}`)).status).toBe(400);
    const children = await api.get(`/v1/customers?parent_customer_ids=${parent.id}&expand=parent_customer`);
    expect(children.body.items.map((c: { id: string }) => c.id)).toEqual([child.id]);
    expect(children.body.items[0].parent_customer.id).toBe(parent.id);

    for (const [query, field] of [
      ['limit=0', 'limit'],
      ['limit=1001', 'limit'],
      ['offset=-1', 'offset'],
      ['sort=colour', 'sort'],
      ['order=sideways', 'order'],
    ]) {
      const res = await api.get(`/v1/customers?${query}`);
      expect(res.status).toBe(400);
      expect(res.body.error.details.field).toBe(field);
    }
  });

  it('keeps the usage history of a deleted customer', async () => {
    const externalId = `usage-${run}`;
    const c = (await api.post('/v1/customers', { external_customer_id: externalId })).body;
    const sent = await api.post('/v1/events', {
      event_name: 'api_call',
      external_customer_id: externalId,
      event_id: `u-${run}`,
      timestamp: new Date().toISOString(),
      properties: { n: 1 },
    });
    expect(sent.status).toBe(202);
    const query = () => api.post('/v1/events/query', { external_customer_id: externalId });
    await waitFor(async () => (await query()).body.events?.length === 1, { what: 'the usage event', timeoutMs: 10_000 });
    expect((await api.delete(`/v1/customers/${c.id}`)).status).toBe(204);
    const after = await query();
    expect(after.status).toBe(200);
    expect(after.body.events).toHaveLength(1);
    expect(after.body.events[0]).toMatchObject({ external_customer_id: externalId, event_name: 'api_call' });
  });

  it('shows another tenant and another environment none of it', async () => {
    const mine = (await api.post('/v1/customers', { external_customer_id: `iso-${run}`, email: 'iso@x.example' })).body;
    const sandboxKey = await api.post('/v1/api-keys', { name: 'sandbox', permissions: ['*'], environment_id: 'sandbox' });
    expect(sandboxKey.status).toBe(201);
    for (const other of [api.withKey(sandboxKey.body.key), api.withKey(cliKey('tenant-e2e-b', 'production'))]) {
      expect((await other.get(`/v1/customers/${mine.id}`)).status).toBe(404);
      expect((await other.get(`/v1/customers/external/iso-${run}`)).status).toBe(404);
      expect((await other.put(`/v1/customers/${mine.id}`, { name: 'x' })).status).toBe(404);
      expect((await other.delete(`/v1/customers/${mine.id}`)).status).toBe(404);
      const list = await other.get('/v1/customers?email=iso@x.example');
      expect(list.body).toEqual({ items: [], pagination: { total: 0, limit: 50, offset: 0 } });
      expect((await other.post('/v1/customers', { external_customer_id: `iso-${run}` })).status).toBe(201);
    }
    expect((await api.get(`/v1/customers/${mine.id}`)).body).toEqual(mine);
  });
});
