import { type ApiClient } from '@billstream/testing';
import { startIntegrationStack, type IntegrationStack } from '../../support/stack';

interface View {
  id: string;
  external_id: string;
  name: string | null;
  email: string | null;
  status: string;
  parent_customer_id: string | null;
  created_at: string;
  updated_at: string;
}

type SortField = 'created_at' | 'updated_at' | 'name' | 'email' | 'external_id';

/** Postgres order: ascending puts nulls last, descending is the exact reverse; ties by id. */
function expectedOrder(all: View[], sort: SortField, order: 'asc' | 'desc'): string[] {
  const asc = [...all].sort((a, b) => {
    const va = a[sort];
    const vb = b[sort];
    if (va !== vb) {
      if (va === null) return 1;
      if (vb === null) return -1;
      return va < vb ? -1 : 1;
    }
    return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
  });
  const ids = asc.map((c) => c.id);
  return order === 'asc' ? ids : ids.reverse();
}

describe('customer list: every query parameter (real Postgres)', () => {
  let stack: IntegrationStack;
  let api: ApiClient;
  let all: View[];
  let parents: View[];

  beforeAll(async () => {
    stack = await startIntegrationStack();
    // An environment of its own, so that totals are exact.
    api = stack.api.withKey(await stack.keyFor('tenant-list', 'production'));
    parents = [];
    for (const p of ['pa', 'pb']) {
      const res = await api.post('/v1/customers', { external_customer_id: p, name: `parent${p}`, email: `${p}@x.example` });
      parents.push(res.body);
    }
    const specs = [
      { name: 'delta', email: 'dd@x.example', status: 'published', parent: 0 },
      { name: 'alpha', email: 'aa@x.example', status: 'draft', parent: 0 },
      { name: 'charlie', email: 'cc@x.example', status: 'archived', parent: 1 },
      { name: 'alpha', email: 'aa@x.example', status: 'published', parent: null },
      { name: null, email: null, status: 'published', parent: null },
      { name: 'bravo', email: 'bb@x.example', status: 'draft', parent: 1 },
      { name: 'echo', email: 'ee@x.example', status: 'published', parent: 1 },
      { name: null, email: 'ff@x.example', status: 'archived', parent: null },
      { name: 'alpha', email: null, status: 'published', parent: null },
      { name: 'golf', email: 'gg@x.example', status: 'published', parent: null },
    ];
    for (const [i, s] of specs.entries()) {
      const res = await api.post('/v1/customers', {
        external_customer_id: `ext${String.fromCharCode(106 - (i % 10))}${i}`,
        name: s.name,
        email: s.email,
        status: s.status,
        parent_customer_id: s.parent === null ? undefined : parents[s.parent].id,
      });
      expect(res.status).toBe(201);
    }
    // Touch a few so that updated_at order differs from created_at order.
    const first = (await api.get('/v1/customers?order=asc&limit=3')).body.items as View[];
    for (const c of first) await api.put(`/v1/customers/${c.id}`, { metadata: { touched: 'yes' } });
    all = (await api.get('/v1/customers?limit=1000')).body.items;
    expect(all).toHaveLength(12);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const ids = (res: { body: { items: View[] } }) => res.body.items.map((c) => c.id);

  it('defaults to created_at desc, limit 50, offset 0', async () => {
    const res = await api.get('/v1/customers');
    expect(res.status).toBe(200);
    expect(res.body.pagination).toEqual({ total: 12, limit: 50, offset: 0 });
    expect(ids(res)).toEqual(expectedOrder(all, 'created_at', 'desc'));
  });

  it.each(['created_at', 'updated_at', 'name', 'email', 'external_id'] as SortField[])(
    'sorts by %s in both orders, ties broken by id, stable across pages',
    async (sort) => {
      for (const order of ['asc', 'desc'] as const) {
        const whole = await api.get(`/v1/customers?sort=${sort}&order=${order}&limit=1000`);
        expect(ids(whole)).toEqual(expectedOrder(all, sort, order));
        const paged: string[] = [];
        for (let offset = 0; offset < 12; offset += 5) {
          const page = await api.get(`/v1/customers?sort=${sort}&order=${order}&limit=5&offset=${offset}`);
          expect(page.body.pagination).toEqual({ total: 12, limit: 5, offset });
          paged.push(...ids(page));
        }
        expect(paged).toEqual(ids(whole));
      }
    },
  );

  it('pages past the end to an empty items array with the total kept', async () => {
    const res = await api.get('/v1/customers?offset=12');
    expect(res.body).toEqual({ items: [], pagination: { total: 12, limit: 50, offset: 12 } });
    const far = await api.get('/v1/customers?offset=100000&limit=1000');
    expect(far.body.items).toEqual([]);
    expect(far.body.pagination.total).toBe(12);
  });

  const filterCases: Array<[string, () => string, (c: View) => boolean]> = [
    ['status=published', () => 'status=published', (c) => c.status === 'published'],
    ['status=draft', () => 'status=draft', (c) => c.status === 'draft'],
    ['status=archived', () => 'status=archived', (c) => c.status === 'archived'],
    ['customer_ids (comma-separated)', () => `customer_ids=${all[0].id},${all[5].id},cust_unknown`, (c) => [all[0].id, all[5].id].includes(c.id)],
    ['customer_ids (repeated key)', () => `customer_ids=${all[1].id}&customer_ids=${all[2].id}`, (c) => [all[1].id, all[2].id].includes(c.id)],
    ['external_ids', () => 'external_ids=pa,extj0,nobody', (c) => ['pa', 'extj0'].includes(c.external_id)],
    ['external_id', () => 'external_id=extj0', (c) => c.external_id === 'extj0'],
    ['email (case-insensitive)', () => 'email=AA@X.Example', (c) => c.email === 'aa@x.example'],
    ['parent_customer_ids (one)', () => `parent_customer_ids=${parents[0].id}`, (c) => c.parent_customer_id === parents[0].id],
    [
      'parent_customer_ids (two)',
      () => `parent_customer_ids=${parents[0].id},${parents[1].id}`,
      (c) => c.parent_customer_id !== null,
    ],
    ['status and parent combined', () => `status=published&parent_customer_ids=${parents[1].id}`, (c) => c.status === 'published' && c.parent_customer_id === parents[1].id],
    ['a filter matching nothing', () => 'email=nobody@x.example', () => false],
  ];

  it.each(filterCases)('filters by %s; total counts the filtered set', async (_label, query, keep) => {
    const expected = expectedOrder(all.filter(keep), 'created_at', 'desc');
    const res = await api.get(`/v1/customers?${query()}`);
    expect(res.status).toBe(200);
    expect(ids(res)).toEqual(expected);
    expect(res.body.pagination.total).toBe(expected.length);
    if (expected.length > 1) {
      const one = await api.get(`/v1/customers?${query()}&limit=1&offset=1`);
      expect(ids(one)).toEqual([expected[1]]);
      expect(one.body.pagination).toEqual({ total: expected.length, limit: 1, offset: 1 });
    }
  });

  it('accepts the limits 1 and 1000', async () => {
    expect((await api.get('/v1/customers?limit=1')).body.items).toHaveLength(1);
    expect((await api.get('/v1/customers?limit=1000')).body.pagination.limit).toBe(1000);
  });

  it('expands parent_customer on every item', async () => {
    const res = await api.get('/v1/customers?expand=parent_customer&limit=1000');
    for (const item of res.body.items) {
      const parent = parents.find((p) => p.id === item.parent_customer_id) ?? null;
      expect(item.parent_customer === null ? null : item.parent_customer.id).toBe(parent?.id ?? null);
    }
    expect(res.body.items.filter((i: { parent_customer: unknown }) => i.parent_customer !== null)).toHaveLength(5);
  });

  it.each([
    ['limit=0', 'limit'],
    ['limit=1001', 'limit'],
    ['limit=-5', 'limit'],
    ['limit=abc', 'limit'],
    ['limit=1.5', 'limit'],
    ['offset=-1', 'offset'],
    ['offset=x', 'offset'],
    ['sort=id', 'sort'],
    ['sort=status', 'sort'],
    ['order=up', 'order'],
    ['order=ASC', 'order'],
    ['status=deleted', 'status'],
    ['expand=wallets', 'expand'],
    ['external_id=', 'external_id'],
    ['email=', 'email'],
    ['external_id=a&external_id=b', 'external_id'],
    ['colour=red', 'colour'],
  ])('rejects %s with 400 naming %s', async (query, field) => {
    const res = await api.get(`/v1/customers?${query}`);
    expect(res.status).toBe(400);
    expect(res.body.success).toBe(false);
    expect(res.body.error.internal_error).toBe('validation_error');
    expect(res.body.error.details.field).toBe(field);
  });

  it('keeps totals exact through concurrent creates, status moves and deletes', async () => {
    const env = api.withKey(await stack.keyFor('tenant-list', 'counting'));
    const made = await Promise.all(
      Array.from({ length: 30 }, (_, i) => env.post('/v1/customers', { external_customer_id: `n${i}`, status: i % 3 === 0 ? 'draft' : 'published' })),
    );
    expect(made.every((r) => r.status === 201)).toBe(true);
    const totals = async () => {
      const out: Record<string, number> = {};
      for (const q of ['', 'status=published', 'status=draft', 'status=archived']) {
        out[q || 'all'] = (await env.get(`/v1/customers?${q}`)).body.pagination.total;
      }
      return out;
    };
    expect(await totals()).toEqual({ all: 30, 'status=published': 20, 'status=draft': 10, 'status=archived': 0 });

    await Promise.all([
      ...made.slice(0, 6).map((r) => env.put(`/v1/customers/${r.body.id}`, { status: 'archived' })),
      ...made.slice(6, 10).map((r) => env.delete(`/v1/customers/${r.body.id}`)),
      ...made.slice(10, 14).map((r) => env.put(`/v1/customers/${r.body.id}`, { name: 'renamed' })),
    ]);
    // 0..5 archived (2 were drafts: 0 and 3); 6..9 deleted (6 and 9 were drafts).
    expect(await totals()).toEqual({ all: 26, 'status=published': 14, 'status=draft': 6, 'status=archived': 6 });
    const failed = await env.post('/v1/customers', { external_customer_id: 'n20' });
    expect(failed.status).toBe(409);
    expect((await totals()).all).toBe(26);
  });
});
