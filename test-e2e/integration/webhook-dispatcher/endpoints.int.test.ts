import { startIntegrationStack, type IntegrationStack } from '../../support/stack';

describe('webhook endpoints API (real Postgres and Kafka, through the gateway)', () => {
  let stack: IntegrationStack;

  beforeAll(async () => {
    stack = await startIntegrationStack({ extra: { env: { WEBHOOK_ALLOW_INSECURE: 'true' } } });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const create = (body: Record<string, unknown>) => stack.api.post('/v1/webhook-endpoints', body);

  it('creates an endpoint and shows its secret only in the create response', async () => {
    const res = await create({ url: 'https://hooks.example.com/billing', events: ['customer.created', 'wallet.created'], description: 'ERP' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^we_[0-9A-Z]{26}$/),
      url: 'https://hooks.example.com/billing',
      events: ['customer.created', 'wallet.created'],
      enabled: true,
      description: 'ERP',
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{32}$/),
      created_at: expect.stringMatching(/Z$/),
      updated_at: expect.stringMatching(/Z$/),
    });
    const got = await stack.api.get(`/v1/webhook-endpoints/${res.body.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual({ ...res.body, secret: undefined });
    expect(got.text).not.toContain(res.body.secret);
    expect(got.headers.etag).toBe('"1"');
    const listed = await stack.api.get('/v1/webhook-endpoints?limit=1000');
    expect(listed.text).not.toContain(res.body.secret);
  });

  it('refuses bad bodies with 400 naming the field, and stores nothing', async () => {
    const before = (await stack.api.get('/v1/webhook-endpoints')).body.pagination.total;
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ events: ['*'] }, 'url'],
      [{ url: 'https://hooks.example.com/' }, 'events'],
      [{ url: 'https://hooks.example.com/', events: [] }, 'events'],
      [{ url: 'https://hooks.example.com/', events: ['customer.created', 'invoice.paid'] }, 'events.1'],
      [{ url: 'https://hooks.example.com/', events: ['*'], colour: 'red' }, 'colour'],
      [{ url: 'https://hooks.example.com/', events: ['*'], enabled: 'yes' }, 'enabled'],
      [{ url: 'hooks.example.com', events: ['*'] }, 'url'],
      [{ url: 'http://hooks.example.com/', events: ['*'] }, 'url'],
      [{ url: 'ftp://hooks.example.com/', events: ['*'] }, 'url'],
      [{ url: 'https://10.1.2.3/hook', events: ['*'] }, 'url'],
      [{ url: 'https://192.168.0.5/hook', events: ['*'] }, 'url'],
      [{ url: 'https://169.254.169.254/latest/meta-data', events: ['*'] }, 'url'],
      [{ url: 'https://[fd00::1]/hook', events: ['*'] }, 'url'],
    ];
    for (const [body, field] of cases) {
      const res = await create(body);
      expect({ body, status: res.status }).toEqual({ body, status: 400 });
      expect(res.body.success).toBe(false);
      expect(res.body.error.internal_error).toBe('validation_error');
      expect(res.body.error.details.field).toBe(field);
    }
    expect((await stack.api.get('/v1/webhook-endpoints')).body.pagination.total).toBe(before);
  });

  it('allows http to loopback only (WEBHOOK_ALLOW_INSECURE=true here)', async () => {
    expect((await create({ url: 'http://127.0.0.1:9/hook', events: ['*'] })).status).toBe(201);
    expect((await create({ url: 'http://localhost:9/hook', events: ['*'] })).status).toBe(201);
  });

  it('lists with pagination in a stable order and filters on enabled', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i += 1) {
      ids.push((await create({ url: `https://hooks.example.com/${i}`, events: ['*'], enabled: i !== 1 })).body.id);
    }
    const all = await stack.api.get('/v1/webhook-endpoints?limit=1000');
    expect(all.status).toBe(200);
    const allIds = all.body.items.map((e: { id: string }) => e.id);
    expect(allIds.slice(-3)).toEqual(ids);
    const page = await stack.api.get(`/v1/webhook-endpoints?limit=2&offset=${all.body.pagination.total - 2}`);
    expect(page.body.items.map((e: { id: string }) => e.id)).toEqual(ids.slice(1));
    expect(page.body.pagination).toEqual({ total: all.body.pagination.total, limit: 2, offset: all.body.pagination.total - 2 });
    const disabled = await stack.api.get('/v1/webhook-endpoints?enabled=false');
    expect(disabled.body.items.map((e: { id: string }) => e.id)).toEqual([ids[1]]);
    for (const q of ['limit=0', 'limit=1001', 'offset=-1', 'enabled=maybe', 'sort=url']) {
      const bad = await stack.api.get(`/v1/webhook-endpoints?${q}`);
      expect({ q, status: bad.status }).toEqual({ q, status: 400 });
    }
  });

  it('updates any field with PUT, keeps the rest, and honours If-Match', async () => {
    const created = (await create({ url: 'https://hooks.example.com/a', events: ['customer.created'] })).body;
    const res = await stack.api.put(`/v1/webhook-endpoints/${created.id}`, { events: ['*'], description: 'all of it' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: created.id, url: created.url, events: ['*'], enabled: true, description: 'all of it' });
    expect(res.headers.etag).toBe('"2"');
    expect(Date.parse(res.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(created.updated_at));

    const stale = await stack.api.put(`/v1/webhook-endpoints/${created.id}`, { enabled: false }, { 'if-match': '"1"' });
    expect(stale.status).toBe(409);
    expect(stale.body.error.internal_error).toBe('version_conflict');
    const fresh = await stack.api.put(`/v1/webhook-endpoints/${created.id}`, { enabled: false, description: null }, { 'if-match': '"2"' });
    expect(fresh.status).toBe(200);
    expect(fresh.body).toMatchObject({ enabled: false, description: null });

    expect((await stack.api.put(`/v1/webhook-endpoints/${created.id}`, { url: 'https://10.0.0.1/' })).body.error.details.field).toBe('url');
    expect((await stack.api.put(`/v1/webhook-endpoints/${created.id}`, { secret: 'x' })).body.error.details.field).toBe('secret');
    expect((await stack.api.get(`/v1/webhook-endpoints/${created.id}`)).body.url).toBe('https://hooks.example.com/a');
  });

  it('deletes with 204; then the endpoint is 404 everywhere', async () => {
    const created = (await create({ url: 'https://hooks.example.com/gone', events: ['*'] })).body;
    const del = await stack.api.delete(`/v1/webhook-endpoints/${created.id}`);
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    for (const res of [
      await stack.api.get(`/v1/webhook-endpoints/${created.id}`),
      await stack.api.put(`/v1/webhook-endpoints/${created.id}`, { enabled: false }),
      await stack.api.delete(`/v1/webhook-endpoints/${created.id}`),
      await stack.api.get(`/v1/webhook-endpoints/${created.id}/deliveries`),
      await stack.api.post(`/v1/webhook-endpoints/${created.id}/test`, { event_name: 'customer.created' }),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body.error.internal_error).toBe('not_found');
    }
  });

  it('keeps tenants and environments apart (404, never 403) and checks permissions', async () => {
    const mine = (await create({ url: 'https://hooks.example.com/mine', events: ['*'] })).body;
    for (const [tenant, env] of [['tenant-b', 'production'], ['tenant-a', 'sandbox']]) {
      const other = stack.api.withKey(await stack.keyFor(tenant, env));
      expect((await other.get(`/v1/webhook-endpoints/${mine.id}`)).status).toBe(404);
      expect((await other.put(`/v1/webhook-endpoints/${mine.id}`, { enabled: false })).status).toBe(404);
      expect((await other.delete(`/v1/webhook-endpoints/${mine.id}`)).status).toBe(404);
      expect((await other.get('/v1/webhook-endpoints')).body.items).toEqual([]);
    }
    const reader = stack.api.withKey(await stack.keyFor('tenant-a', 'production', ['webhooks:read']));
    expect((await reader.get(`/v1/webhook-endpoints/${mine.id}`)).status).toBe(200);
    const denied = await reader.post('/v1/webhook-endpoints', { url: 'https://hooks.example.com/', events: ['*'] });
    expect(denied.status).toBe(403);
    expect(denied.body.error.internal_error).toBe('permission_denied');
    expect((await reader.delete(`/v1/webhook-endpoints/${mine.id}`)).status).toBe(403);
    const none = stack.api.withKey(await stack.keyFor('tenant-a', 'production', ['customers:read']));
    expect((await none.get('/v1/webhook-endpoints')).status).toBe(403);
  });
});

describe('webhook endpoint URLs as production checks them (no WEBHOOK_ALLOW_* set)', () => {
  let stack: IntegrationStack;

  beforeAll(async () => {
    stack = await startIntegrationStack();
  });
  afterAll(async () => {
    await stack?.stop();
  });

  // IPv6 forms whose address is loopback, private, link-local or reserved: IPv4-compatible
  // (the URL parser writes [::127.0.0.1] as [::7f00:1]), 6to4, IPv4-translated, local NAT64,
  // Teredo and site-local.
  const hidden = [
    'https://[::127.0.0.1]/x',
    'https://[::a9fe:a9fe]/latest/meta-data',
    'https://[2002:7f00:1::]/hook',
    'https://[2002:a00:1::1]/hook',
    'https://[2002:c000:201::]/hook',
    'https://[::ffff:0:a00:1]/hook',
    'https://[64:ff9b:1::a00:1]/hook',
    'https://[2001::1]/hook',
    'https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/hook',
    'https://[fec0::1]/hook',
  ];

  it('refuses an endpoint whose URL hides a non-public address in an IPv6 form, with 400, and stores nothing', async () => {
    const before = (await stack.api.get('/v1/webhook-endpoints')).body.pagination.total;
    for (const url of hidden) {
      const res = await stack.api.post('/v1/webhook-endpoints', { url, events: ['*'] });
      expect({ url, status: res.status }).toEqual({ url, status: 400 });
      expect(res.body.success).toBe(false);
      expect(res.body.error.internal_error).toBe('validation_error');
      expect(res.body.error.details).toMatchObject({ field: 'url', reason: 'address_not_allowed' });
    }
    expect((await stack.api.get('/v1/webhook-endpoints')).body.pagination.total).toBe(before);
  });

  it('refuses such a URL on PUT too and leaves the endpoint as it was', async () => {
    const created = await stack.api.post('/v1/webhook-endpoints', { url: 'https://hooks.example.com/kept', events: ['*'] });
    expect(created.status).toBe(201);
    for (const url of ['https://[2002:7f00:1::]/hook', 'https://[::127.0.0.1]/x', 'https://[fec0::1]/']) {
      const res = await stack.api.put(`/v1/webhook-endpoints/${created.body.id}`, { url });
      expect({ url, status: res.status }).toEqual({ url, status: 400 });
      expect(res.body.error.details).toMatchObject({ field: 'url', reason: 'address_not_allowed' });
    }
    const got = await stack.api.get(`/v1/webhook-endpoints/${created.body.id}`);
    expect(got.body.url).toBe('https://hooks.example.com/kept');
    expect(got.headers.etag).toBe('"1"');
  });

  it('accepts the same forms when they carry a public IPv4 address', async () => {
    for (const url of ['https://[2002:808:808::1]/hook', 'https://[::ffff:808:808]/hook']) {
      const res = await stack.api.post('/v1/webhook-endpoints', { url, events: ['customer.created'] });
      expect({ url, status: res.status }).toEqual({ url, status: 201 });
    }
  });
});
