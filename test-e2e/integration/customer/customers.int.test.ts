/** One file: every case uses the one stack started in beforeAll (a stack costs seconds to start on two cores). */
import { type ApiClient } from '@billstream/testing';
import { startIntegrationStack, TEST_ENVIRONMENT, TEST_TENANT, type IntegrationStack } from '../../support/stack';

describe('customer API through the gateway (real Postgres and Kafka)', () => {
  let stack: IntegrationStack;
  let api: ApiClient;
  let seq = 0;
  const ext = (label = 'c') => `${label}-${Date.now().toString(36)}-${++seq}`;

  beforeAll(async () => {
    stack = await startIntegrationStack();
    api = stack.api;
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const create = async (body: Record<string, unknown> = {}, client: ApiClient = api) => {
    const res = await client.post('/v1/customers', { external_customer_id: ext(), ...body });
    expect(res.status).toBe(201);
    return res.body;
  };

  describe('create and read', () => {
    it('creates a customer with every field and reads it by id and by external id', async () => {
      const externalId = ext('full');
      const res = await api.post('/v1/customers', {
        external_customer_id: externalId,
        name: 'Acme Corp',
        email: 'billing@acme.example',
        address_line1: '1 Main St',
        address_line2: 'Floor 2',
        address_city: 'Springfield',
        address_state: 'IL',
        address_postal_code: '62701',
        address_country: 'US',
        metadata: { plan: 'gold' },
      });
      expect(res.status).toBe(201);
      expect(res.headers.etag).toBe('"1"');
      expect(res.body).toEqual({
        id: expect.stringMatching(/^cust_[0-9A-Z]{26}$/),
        external_id: externalId,
        name: 'Acme Corp',
        email: 'billing@acme.example',
        address_line1: '1 Main St',
        address_line2: 'Floor 2',
        address_city: 'Springfield',
        address_state: 'IL',
        address_postal_code: '62701',
        address_country: 'US',
        tax_ids: [],
        tax_exempt: 'none',
        tax_rate_ids: [],
        parent_customer_id: null,
        metadata: { plan: 'gold' },
        status: 'published',
        tenant_id: TEST_TENANT,
        environment_id: TEST_ENVIRONMENT,
        created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
        updated_at: res.body.created_at,
      });
      expect(res.body).not.toHaveProperty('external_customer_id');

      const byId = await api.get(`/v1/customers/${res.body.id}`);
      expect(byId.status).toBe(200);
      expect(byId.headers.etag).toBe('"1"');
      expect(byId.body).toEqual(res.body);

      const byExternal = await api.get(`/v1/customers/external/${encodeURIComponent(externalId)}`);
      expect(byExternal.status).toBe(200);
      expect(byExternal.body).toEqual(res.body);
    });

    it('needs only external_customer_id; status may be given as draft', async () => {
      const minimal = await create();
      expect(minimal).toMatchObject({ name: null, email: null, metadata: {}, status: 'published' });
      const draft = await create({ status: 'draft' });
      expect(draft.status).toBe('draft');
    });

    it.each([
      [{}, 'external_customer_id'],
      [{ external_customer_id: '' }, 'external_customer_id'],
      [{ external_customer_id: 'x'.repeat(256) }, 'external_customer_id'],
      [{ external_customer_id: 42 }, 'external_customer_id'],
      [{ external_customer_id: 'ok', email: 'not-an-email' }, 'email'],
      [{ external_customer_id: 'ok', email: 'a@' }, 'email'],
      [{ external_customer_id: 'ok', metadata: { n: 1 } }, 'metadata.n'],
      [{ external_customer_id: 'ok', metadata: 'x' }, 'metadata'],
      [{ external_customer_id: 'ok', status: 'deleted' }, 'status'],
      [{ external_customer_id: 'ok', nickname: 'x' }, 'nickname'],
      [{ external_customer_id: 'ok', name: 'x'.repeat(256) }, 'name'],
    ])('rejects a bad create body with 400 naming the field (#%#), and stores nothing', async (body, field) => {
      const res = await api.post('/v1/customers', body);
      expect(res.status).toBe(400);
      expect(res.body.success).toBe(false);
      expect(res.body.error.internal_error).toBe('validation_error');
      expect(res.body.error.details.field).toBe(field);
      const ok = await api.get('/v1/customers/external/ok');
      expect(ok.status).toBe(404);
    });

    it('answers 404 not_found for unknown ids', async () => {
      const byId = await api.get('/v1/customers/cust_01ARZ3NDEKTSV4RRFFQ69G5FAV');
      expect(byId.status).toBe(404);
      expect(byId.body.error.internal_error).toBe('not_found');
      expect(byId.body.error.details.field).toBe('id');
      const byExternal = await api.get('/v1/customers/external/nobody');
      expect(byExternal.status).toBe(404);
      expect(byExternal.body.error.internal_error).toBe('not_found');
    });
  });

  describe('external id uniqueness', () => {
    it('gives 409 already_exists on a duplicate, also when the first one is archived', async () => {
      const first = await create();
      const dup = await api.post('/v1/customers', { external_customer_id: first.external_id });
      expect(dup.status).toBe(409);
      expect(dup.body.error.internal_error).toBe('already_exists');
      expect(dup.body.error.details.field).toBe('external_customer_id');

      const archived = await api.put(`/v1/customers/${first.id}`, { status: 'archived' });
      expect(archived.status).toBe(200);
      const dupArchived = await api.post('/v1/customers', { external_customer_id: first.external_id });
      expect(dupArchived.status).toBe(409);
      expect(dupArchived.body.error.internal_error).toBe('already_exists');
    });

    it('lets concurrent creates with one external id give exactly one 201', async () => {
      const externalId = ext('race');
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) => api.post('/v1/customers', { external_customer_id: externalId, name: `r${i}` })),
      );
      const statuses = results.map((r) => r.status).sort();
      expect(statuses.filter((s) => s === 201)).toHaveLength(1);
      expect(statuses.filter((s) => s === 409)).toHaveLength(19);
      for (const r of results.filter((x) => x.status === 409)) expect(r.body.error.internal_error).toBe('already_exists');
      const list = await api.get(`/v1/customers?external_id=${externalId}`);
      expect(list.body.pagination.total).toBe(1);
    });

    it('keeps uniqueness when an update renames the external id', async () => {
      const a = await create();
      const b = await create();
      const clash = await api.put(`/v1/customers/${b.id}`, { external_customer_id: a.external_id });
      expect(clash.status).toBe(409);
      expect(clash.body.error.internal_error).toBe('already_exists');
      const renamed = await api.put(`/v1/customers/${b.id}`, { external_customer_id: `${b.external_id}-new` });
      expect(renamed.status).toBe(200);
      expect(renamed.body.external_id).toBe(`${b.external_id}-new`);
      expect((await api.get(`/v1/customers/external/${b.external_id}`)).status).toBe(404);
    });

    it('frees the external id of a deleted customer for reuse', async () => {
      const c = await create();
      expect((await api.delete(`/v1/customers/${c.id}`)).status).toBe(204);
      const again = await api.post('/v1/customers', { external_customer_id: c.external_id });
      expect(again.status).toBe(201);
      expect(again.body.id).not.toBe(c.id);
    });
  });

  describe('update', () => {
    it('changes given fields, keeps absent ones, clears nulls, and moves status among all three', async () => {
      const c = await create({ name: 'Before', email: 'a@b.example', address_city: 'Paris', metadata: { k: 'v' } });
      const res = await api.put(`/v1/customers/${c.id}`, { name: 'After', address_city: null });
      expect(res.status).toBe(200);
      expect(res.headers.etag).toBe('"2"');
      expect(res.body).toMatchObject({ name: 'After', email: 'a@b.example', address_city: null, metadata: { k: 'v' } });
      expect(Date.parse(res.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(c.updated_at));
      expect(res.body.created_at).toBe(c.created_at);

      for (const status of ['draft', 'archived', 'published', 'archived', 'draft', 'published']) {
        const moved = await api.put(`/v1/customers/${c.id}`, { status });
        expect(moved.status).toBe(200);
        expect(moved.body.status).toBe(status);
      }
      expect((await api.get(`/v1/customers/${c.id}`)).body.status).toBe('published');
    });

    it('updates by ?external_customer_id=', async () => {
      const c = await create({ name: 'Old' });
      const res = await api.put(`/v1/customers?external_customer_id=${encodeURIComponent(c.external_id)}`, {
        name: 'New',
        metadata: { tier: '2' },
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: c.id, name: 'New', metadata: { tier: '2' } });

      const missing = await api.put('/v1/customers?external_customer_id=nobody-here', { name: 'x' });
      expect(missing.status).toBe(404);
      expect(missing.body.error.details.field).toBe('external_customer_id');

      const noQuery = await api.put('/v1/customers', { name: 'x' });
      expect(noQuery.status).toBe(400);
      expect(noQuery.body.error.details.field).toBe('external_customer_id');
    });

    it('rejects bad bodies with 400 naming the field and changes nothing', async () => {
      const c = await create({ email: 'keep@x.example' });
      for (const [body, field] of [
        [{ email: 'nope' }, 'email'],
        [{ status: 'gone' }, 'status'],
        [{ id: 'cust_x' }, 'id'],
        [{ external_customer_id: '' }, 'external_customer_id'],
        [{ metadata: { a: { b: 1 } } }, 'metadata.a'],
      ] as const) {
        const res = await api.put(`/v1/customers/${c.id}`, body);
        expect(res.status).toBe(400);
        expect(res.body.error.details.field).toBe(field);
      }
      const after = await api.get(`/v1/customers/${c.id}`);
      expect(after.body).toEqual(c);
      expect(after.headers.etag).toBe('"1"');
    });

    it('answers 404 for an unknown id', async () => {
      const res = await api.put('/v1/customers/cust_01ARZ3NDEKTSV4RRFFQ69G5FAV', { name: 'x' });
      expect(res.status).toBe(404);
      expect(res.body.error.internal_error).toBe('not_found');
    });

    it('keeps the version when nothing changes', async () => {
      const c = await create({ name: 'Same', metadata: { a: '1', b: '2' } });
      const res = await api.put(`/v1/customers/${c.id}`, { name: 'Same', metadata: { b: '2', a: '1' } });
      expect(res.status).toBe(200);
      expect(res.headers.etag).toBe('"1"');
      expect(res.body).toEqual(c);
    });
  });

  describe('optimistic locking', () => {
    it('accepts the current ETag ("<version>", alone or listed), refuses a stale or weak one with 409 version_conflict, and a malformed one with 400', async () => {
      const c = await create({ name: 'v1' });
      const read = await api.get(`/v1/customers/${c.id}`);
      const etag = read.headers.etag as string;
      const first = await api.put(`/v1/customers/${c.id}`, { name: 'v2' }, { 'if-match': etag });
      expect(first.status).toBe(200);
      expect(first.headers.etag).toBe('"2"');

      const stale = await api.put(`/v1/customers/${c.id}`, { name: 'v3' }, { 'if-match': etag });
      expect(stale.status).toBe(409);
      expect(stale.body.error.internal_error).toBe('version_conflict');
      const staleByExternal = await api.put(
        `/v1/customers?external_customer_id=${c.external_id}`,
        { name: 'v3' },
        { 'if-match': etag },
      );
      expect(staleByExternal.status).toBe(409);
      expect(staleByExternal.body.error.internal_error).toBe('version_conflict');
      expect((await api.get(`/v1/customers/${c.id}`)).body.name).toBe('v2');

      // Strong comparison (RFC 9110): the weak form of the current ETag does not match.
      const weak = await api.put(`/v1/customers/${c.id}`, { name: 'v3' }, { 'if-match': 'W/"2"' });
      expect(weak.status).toBe(409);
      expect(weak.body.error.details).toMatchObject({ field: 'If-Match', current_etag: '"2"' });
      const listed = await api.put(`/v1/customers/${c.id}`, { name: 'v3' }, { 'if-match': '"1", "2"' });
      expect(listed.status).toBe(200);
      const any = await api.put(`/v1/customers/${c.id}`, { name: 'v4' }, { 'if-match': '*' });
      expect(any.status).toBe(200);

      const malformed = await api.put(`/v1/customers/${c.id}`, { name: 'v5' }, { 'if-match': 'yesterday' });
      expect(malformed.status).toBe(400);
      expect(malformed.body.error.details.field).toBe('If-Match');
    });
  });

  describe('hierarchy', () => {
    it('links a child to a parent and expands parent_customer on read and list', async () => {
      const parent = await create({ name: 'Parent' });
      const child = await create({ name: 'Child', parent_customer_id: parent.id });
      expect(child.parent_customer_id).toBe(parent.id);

      const plain = await api.get(`/v1/customers/${child.id}`);
      expect(plain.body).not.toHaveProperty('parent_customer');
      const expanded = await api.get(`/v1/customers/${child.id}?expand=parent_customer`);
      expect(expanded.status).toBe(200);
      expect(expanded.body.parent_customer).toEqual(parent);
      const orphan = await api.get(`/v1/customers/external/${parent.external_id}?expand=parent_customer`);
      expect(orphan.body.parent_customer).toBeNull();

      const list = await api.get(`/v1/customers?parent_customer_ids=${parent.id}&expand=parent_customer`);
      expect(list.body.items).toEqual([{ ...child, parent_customer: parent }]);

      const badExpand = await api.get(`/v1/customers/${child.id}?expand=wallets`);
      expect(badExpand.status).toBe(400);
      expect(badExpand.body.error.details.field).toBe('expand');
    });

    it('needs the parent to exist in the same tenant and environment (404 naming parent_customer_id)', async () => {
      const unknown = await api.post('/v1/customers', {
        external_customer_id: ext(),
        parent_customer_id: 'cust_01ARZ3NDEKTSV4RRFFQ69G5FAV',
      });
      expect(unknown.status).toBe(404);
      expect(unknown.body.error.internal_error).toBe('not_found');
      expect(unknown.body.error.details.field).toBe('parent_customer_id');

      for (const [tenant, env] of [
        ['tenant-b', TEST_ENVIRONMENT],
        [TEST_TENANT, 'sandbox'],
      ]) {
        const other = api.withKey(await stack.keyFor(tenant, env));
        const foreignParent = await create({}, other);
        const res = await api.post('/v1/customers', { external_customer_id: ext(), parent_customer_id: foreignParent.id });
        expect(res.status).toBe(404);
        expect(res.body.error.details.field).toBe('parent_customer_id');
        const c = await create();
        const upd = await api.put(`/v1/customers/${c.id}`, { parent_customer_id: foreignParent.id });
        expect(upd.status).toBe(404);
        expect(upd.body.error.details.field).toBe('parent_customer_id');
      }
    });

    it('refuses a self-parent and a cycle with 400, and allows detaching with null', async () => {
      const a = await create();
      const b = await create({ parent_customer_id: a.id });
      const c = await create({ parent_customer_id: b.id });

      const self = await api.put(`/v1/customers/${a.id}`, { parent_customer_id: a.id });
      expect(self.status).toBe(400);
      expect(self.body.error.details.field).toBe('parent_customer_id');

      const cycle = await api.put(`/v1/customers/${a.id}`, { parent_customer_id: c.id });
      expect(cycle.status).toBe(400);
      expect(cycle.body.error.internal_error).toBe('validation_error');
      expect(cycle.body.error.details.field).toBe('parent_customer_id');
      expect((await api.get(`/v1/customers/${a.id}`)).body.parent_customer_id).toBeNull();

      const detached = await api.put(`/v1/customers/${c.id}`, { parent_customer_id: null });
      expect(detached.status).toBe(200);
      expect(detached.body.parent_customer_id).toBeNull();
      const moved = await api.put(`/v1/customers/${a.id}`, { parent_customer_id: c.id });
      expect(moved.status).toBe(200);
      expect(moved.body.parent_customer_id).toBe(c.id);
    });

    it('never forms a cycle when two moves race', async () => {
      for (let round = 0; round < 5; round++) {
        const a = await create();
        const b = await create();
        const [ab, ba] = await Promise.all([
          api.put(`/v1/customers/${a.id}`, { parent_customer_id: b.id }),
          api.put(`/v1/customers/${b.id}`, { parent_customer_id: a.id }),
        ]);
        expect([ab.status, ba.status].sort()).toEqual([200, 400]);
      }
    });
  });

  describe('delete', () => {
    it('answers 204 with an empty body; the customer is gone afterwards', async () => {
      const c = await create();
      const res = await api.delete(`/v1/customers/${c.id}`);
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      expect((await api.get(`/v1/customers/${c.id}`)).status).toBe(404);
      expect((await api.get(`/v1/customers/external/${c.external_id}`)).status).toBe(404);
      expect((await api.put(`/v1/customers/${c.id}`, { name: 'x' })).status).toBe(404);
      const again = await api.delete(`/v1/customers/${c.id}`);
      expect(again.status).toBe(404);
      expect(again.body.error.internal_error).toBe('not_found');
      const list = await api.get(`/v1/customers?customer_ids=${c.id}`);
      expect(list.body.pagination.total).toBe(0);
    });

    it('refuses to delete a customer with children (400) until they are detached', async () => {
      const parent = await create();
      const child = await create({ parent_customer_id: parent.id });
      const res = await api.delete(`/v1/customers/${parent.id}`);
      expect(res.status).toBe(400);
      expect(res.body.error.internal_error).toBe('validation_error');
      expect(res.body.error.details).toMatchObject({ field: 'id', children: 1 });
      expect((await api.get(`/v1/customers/${parent.id}`)).status).toBe(200);

      await api.put(`/v1/customers/${child.id}`, { parent_customer_id: null });
      expect((await api.delete(`/v1/customers/${parent.id}`)).status).toBe(204);
    });

    it('needs customers:write; customers:read may only read', async () => {
      const c = await create();
      const reader = api.withKey(await stack.keyFor(TEST_TENANT, TEST_ENVIRONMENT, ['customers:read']));
      expect((await reader.get(`/v1/customers/${c.id}`)).status).toBe(200);
      expect((await reader.delete(`/v1/customers/${c.id}`)).status).toBe(403);
      expect((await reader.post('/v1/customers', { external_customer_id: ext() })).status).toBe(403);
      expect((await reader.put(`/v1/customers/${c.id}`, { name: 'x' })).status).toBe(403);
    });
  });

  describe('isolation', () => {
    it('shows another tenant and another environment none of it', async () => {
      const c = await create({ email: 'iso@x.example', name: 'Iso' });
      for (const [tenant, env] of [
        ['tenant-b', TEST_ENVIRONMENT],
        [TEST_TENANT, 'staging'],
      ]) {
        const other = api.withKey(await stack.keyFor(tenant, env));
        expect((await other.get(`/v1/customers/${c.id}`)).status).toBe(404);
        expect((await other.get(`/v1/customers/external/${c.external_id}`)).status).toBe(404);
        expect((await other.put(`/v1/customers/${c.id}`, { name: 'hijack' })).status).toBe(404);
        expect((await other.put(`/v1/customers?external_customer_id=${c.external_id}`, { name: 'hijack' })).status).toBe(404);
        expect((await other.delete(`/v1/customers/${c.id}`)).status).toBe(404);
        for (const q of ['', `?customer_ids=${c.id}`, `?external_id=${c.external_id}`, '?email=iso@x.example']) {
          const list = await other.get(`/v1/customers${q}`);
          expect(list.status).toBe(200);
          expect(list.body.items.map((i: { id: string }) => i.id)).not.toContain(c.id);
        }
        const own = await other.post('/v1/customers', { external_customer_id: c.external_id });
        expect(own.status).toBe(201);
        expect(own.body).toMatchObject({ tenant_id: tenant, environment_id: env });
      }
      const mine = await api.get(`/v1/customers/${c.id}`);
      expect(mine.body).toEqual(c);
    });
  });
});
