import { createDb, type Db } from '@billstream/db';
import { waitFor, type ApiClient } from '@billstream/testing';
import { parse } from 'csv-parse/sync';
import { startIntegrationStack, type IntegrationStack } from '../../support/stack';
import { finishedTask, type Task } from './tasks-support';
import { fixedPrice } from './prices';

/**
 * Issue #15's tasks through the gateway, on real Postgres and Kafka: exports of events,
 * customers and invoices (CSV and JSONL, filters), imports of events and customers (bad rows
 * listed by line, good rows land, a file imported twice stores each event once, CSV quoting),
 * cancel, permissions and every bad input answered 4xx in the envelope.
 */

describe('tasks: bulk export and import through the gateway (real Postgres and Kafka)', () => {
  let stack: IntegrationStack;
  let api: ApiClient;
  let db: Db;

  beforeAll(async () => {
    stack = await startIntegrationStack({ extra: { env: { TASKS_POLL_MS: '100', TASKS_BATCH_ROWS: '50' } } });
    api = stack.api;
    db = createDb({ databaseUrl: stack.database.url, schema: 'billing', poolMax: 2 });
  }, 120_000);
  afterAll(async () => {
    await db?.destroy();
    await stack?.stop();
  }, 120_000);

  const finished = (id: string, client = api): Promise<Task> => finishedTask(client, id);

  async function importFile(entity: string, fileType: string, text: string | Buffer, client = api, contentType = 'text/plain'): Promise<Task> {
    const res = await client.post(`/v1/tasks/imports?entity_type=${entity}&file_type=${fileType}`, text.toString(), { 'content-type': contentType });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ id: expect.stringMatching(/^task_/), task_type: 'IMPORT', entity_type: entity, file_type: fileType });
    return finished(res.body.id, client);
  }

  async function exportFile(body: Record<string, unknown>, client = api): Promise<{ task: Task; text: string; contentType: string }> {
    const res = await client.post('/v1/tasks', { task_type: 'EXPORT', ...body });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ task_type: 'EXPORT', task_status: 'PENDING', processed_records: 0 });
    const task = await finished(res.body.id, client);
    expect(task.task_status).toBe('COMPLETED');
    const file = await client.get(`/v1/tasks/${task.id}/download`);
    expect(file.status).toBe(200);
    expect(Buffer.byteLength(file.text)).toBe(task.file_size_bytes);
    return { task, text: file.text, contentType: String(file.headers['content-type']) };
  }

  async function storedEvents(customer: string): Promise<Array<{ id: string; properties: Record<string, unknown>; source: string | null }>> {
    const res = await api.post('/v1/events/query', { external_customer_id: customer, page_size: 1000 });
    expect(res.status).toBe(200);
    return res.body.events;
  }

  async function eventCount(customer: string, expected: number): Promise<void> {
    await waitFor(async () => (await storedEvents(customer)).length === expected, { timeoutMs: 30_000, what: `${expected} events of ${customer}` });
  }

  const jsonl = (rows: unknown[]) => rows.map((r) => (typeof r === 'string' ? r : JSON.stringify(r))).join('\n') + '\n';

  describe('event imports', () => {
    it('imports JSONL: good rows land, bad rows are counted and listed by line; importing it again stores each event once', async () => {
      const rows = [
        { event_id: 'imp-1', event_name: 'api_call', external_customer_id: 'imp-a', timestamp: '2026-01-01T00:00:00Z', properties: { n: 1 } },
        { event_name: 'api_call', external_customer_id: 'imp-a', timestamp: '2026-01-01T00:00:01Z' }, // no id: derived from content
        '{not json',
        { event_id: 'imp-3', event_name: 'api_call', timestamp: '2026-01-01T00:00:02Z' }, // no customer
        '',
        { event_id: 'imp-4', event_name: 'api_call', external_customer_id: 'imp-a', timestamp: 'yesterday' },
        [1, 2],
        { event_id: 'imp-5', event_name: 'api_call', external_customer_id: 'imp-a', timestamp: '2026-01-01T00:00:03Z', extra: 1 },
        { event_id: 'imp-6', event_name: 'api_call', external_customer_id: 'imp-a', timestamp: '2026-01-01T00:00:04Z', source: 'crm' },
      ];
      const task = await importFile('EVENTS', 'JSONL', jsonl(rows));
      expect(task).toMatchObject({ task_status: 'COMPLETED', processed_records: 8, successful_records: 3, failed_records: 5, total_records: 8 });
      expect(task.errors.map((e) => e.line)).toEqual([3, 4, 6, 7, 8]);
      expect(task.errors[0].message).toMatch(/not valid JSON/);
      expect(task.errors[1].message).toMatch(/external_customer_id/);
      expect(task.errors[2].message).toMatch(/timestamp/);
      expect(task.errors[3].message).toMatch(/JSON object/);
      expect(task.errors[4].message).toMatch(/extra/);
      expect(task.error_summary).toMatch(/5 row\(s\)/);
      await eventCount('imp-a', 3);

      const again = await importFile('EVENTS', 'JSONL', jsonl(rows));
      expect(again).toMatchObject({ task_status: 'COMPLETED', successful_records: 3, failed_records: 5 });
      // Give the second copies time to be consumed: they must have been deduplicated, not stored.
      await new Promise((r) => setTimeout(r, 1500));
      const events = await storedEvents('imp-a');
      expect(events).toHaveLength(3);
      const ids = events.map((e) => e.id).sort();
      expect(ids.slice(0, 2)).toEqual(['imp-1', 'imp-6']);
      expect(ids[2]).toMatch(/^imp_[0-9a-f]{40}$/);
    });

    it('reads CSV with a header, quoted fields, embedded commas, quotes and newlines; bad rows by their first line', async () => {
      const csv = [
        'event_id,event_name,external_customer_id,timestamp,source,properties',
        'csv-1,api_call,csv-a,2026-02-01T00:00:00Z,"web, eu","{""region"":""eu, west"",""n"":2}"',
        'csv-2,api_call,csv-a,2026-02-01T00:00:01Z,"two',
        'lines",',
        'csv-3,api_call,csv-a,2026-02-01T00:00:02Z,x,{bad json}',
        'csv-4,api_call,csv-a',
        '"csv-5",api_call,csv-a,2026-02-01T00:00:03Z,"say ""hi""",',
        'csv-6,,csv-a,2026-02-01T00:00:04Z,,',
      ].join('\r\n');
      const task = await importFile('EVENTS', 'CSV', csv, api, 'text/csv');
      expect(task).toMatchObject({ task_status: 'COMPLETED', processed_records: 6, successful_records: 3, failed_records: 3 });
      expect(task.errors.map((e) => e.line)).toEqual([5, 6, 8]);
      expect(task.errors[0].message).toMatch(/properties must be a JSON object/);
      expect(task.errors[1].message).toMatch(/column|length/i);
      expect(task.errors[2].message).toMatch(/event_name/);
      await eventCount('csv-a', 3);
      const byId = Object.fromEntries((await storedEvents('csv-a')).map((e) => [e.id, e]));
      expect(byId['csv-1']).toMatchObject({ source: 'web, eu', properties: { region: 'eu, west', n: 2 } });
      expect(byId['csv-2']).toMatchObject({ source: 'two\r\nlines', properties: {} });
      expect(byId['csv-5']).toMatchObject({ source: 'say "hi"' });
    });

    it('fails the whole file when it cannot be read (an unknown CSV column), storing nothing', async () => {
      const task = await importFile('EVENTS', 'CSV', 'event_id,event_name,external_customer_id,timestamp,colour\ncol-1,api_call,col-a,2026-02-01T00:00:00Z,red\n');
      expect(task).toMatchObject({ task_status: 'FAILED', processed_records: 0, successful_records: 0 });
      expect(task.error_summary).toMatch(/unknown column colour/);
      await new Promise((r) => setTimeout(r, 500));
      expect(await storedEvents('col-a')).toHaveLength(0);
    });

    it('accepts an empty file and any Content-Type (application/json too, the body is never parsed as JSON)', async () => {
      expect(await importFile('EVENTS', 'JSONL', '', api, 'application/json')).toMatchObject({ task_status: 'COMPLETED', processed_records: 0, total_records: 0 });
      const one = jsonl([{ event_id: 'ct-1', event_name: 'api_call', external_customer_id: 'ct-a', timestamp: '2026-02-01T00:00:00Z' }]);
      expect(await importFile('EVENTS', 'JSONL', one, api, 'application/json')).toMatchObject({ task_status: 'COMPLETED', successful_records: 1 });
      await eventCount('ct-a', 1);
    });

    it('imports many batches in order and reports progress on the way', async () => {
      const rows = Array.from({ length: 400 }, (_, i) => ({ event_id: `many-${i}`, event_name: 'api_call', external_customer_id: 'many-a', timestamp: `2026-03-01T00:00:${String(i % 60).padStart(2, '0')}Z`, properties: { i } }));
      const res = await api.post('/v1/tasks/imports?entity_type=EVENTS&file_type=JSONL', jsonl(rows), { 'content-type': 'application/x-ndjson' });
      expect(res.status).toBe(202);
      const seen = new Set<number>();
      const task = await waitFor(
        async () => {
          const t = (await api.get(`/v1/tasks/${res.body.id}`)).body as Task;
          seen.add(t.processed_records);
          return t.task_status === 'COMPLETED' ? t : undefined;
        },
        { timeoutMs: 30_000, intervalMs: 10 },
      );
      expect(task).toMatchObject({ processed_records: 400, successful_records: 400, failed_records: 0 });
      // Batches of 50 (TASKS_BATCH_ROWS): every value seen is a batch boundary.
      for (const n of seen) expect(n % 50).toBe(0);
      await eventCount('many-a', 400);
    });
  });

  describe('customer imports', () => {
    it('creates customers from CSV (metadata as a JSON string), listing bad and duplicate rows by line', async () => {
      const csv = [
        'external_customer_id,name,email,metadata,address_city',
        'cimp-1,"Acme, Inc.",billing@acme.test,"{""tier"":""gold""}",Paris',
        'cimp-2,Bad Email,not-an-email,,',
        'cimp-1,Duplicate,,,',
        ',No id,,,',
        'cimp-3,"Multi',
        'line",,,',
      ].join('\n');
      const task = await importFile('CUSTOMERS', 'CSV', csv);
      expect(task).toMatchObject({ task_status: 'COMPLETED', processed_records: 5, successful_records: 2, failed_records: 3 });
      expect(task.errors.map((e) => e.line)).toEqual([3, 4, 5]);
      expect(task.errors[0].message).toMatch(/email/);
      expect(task.errors[1].message).toMatch(/exist/i);
      const acme = await api.get('/v1/customers/external/cimp-1');
      expect(acme.body).toMatchObject({ name: 'Acme, Inc.', email: 'billing@acme.test', metadata: { tier: 'gold' }, address_city: 'Paris' });
      expect((await api.get('/v1/customers/external/cimp-3')).body).toMatchObject({ name: 'Multi\nline' });
    });

    it('exports customers and imports the export back into another environment (CSV and JSONL round trips)', async () => {
      for (const fileType of ['CSV', 'JSONL']) {
        const other = api.withKey(await stack.keyFor('tenant-a', `copy-${fileType}`));
        const { task, text } = await exportFile({ entity_type: 'CUSTOMERS', file_type: fileType, filters: { external_customer_id: 'cimp-1' } });
        expect(task.processed_records).toBe(1);
        const back = await importFile('CUSTOMERS', fileType, text, other);
        expect(back).toMatchObject({ task_status: 'COMPLETED', successful_records: 1, failed_records: 0 });
        const copy = await other.get('/v1/customers/external/cimp-1');
        expect(copy.body).toMatchObject({ name: 'Acme, Inc.', email: 'billing@acme.test', metadata: { tier: 'gold' }, environment_id: `copy-${fileType}` });
      }
    });
  });

  describe('exports', () => {
    beforeAll(async () => {
      const events = Array.from({ length: 120 }, (_, i) => ({
        event_id: `exp-${String(i).padStart(3, '0')}`,
        event_name: i % 2 ? 'api_call' : 'storage',
        external_customer_id: i % 3 ? 'exp-a' : 'exp-b',
        timestamp: new Date(Date.UTC(2026, 3, 1, 0, 0, i)).toISOString(),
        properties: { i, note: i === 7 ? 'comma, "quote"\nnewline' : 'x' },
        source: i === 8 ? 'a,b' : undefined,
      }));
      expect((await api.post('/v1/events/bulk', { events })).status).toBe(202);
      await waitFor(async () => (await api.post('/v1/events/query', { start_time: '2026-04-01T00:00:00Z', end_time: '2026-04-02T00:00:00Z' })).body.total_count === 120, {
        timeoutMs: 30_000,
      });
    });

    it('exports events as CSV in time order across many pages, with quoting a CSV library reads back', async () => {
      const { task, text, contentType } = await exportFile({ entity_type: 'EVENTS', file_type: 'CSV', filters: { start_time: '2026-04-01T00:00:00Z', end_time: '2026-04-02T00:00:00Z' } });
      expect(contentType).toMatch(/text\/csv/);
      expect(task).toMatchObject({ processed_records: 120, successful_records: 120, total_records: 120 });
      const rows = parse(text, { columns: true }) as Array<Record<string, string>>;
      expect(Object.keys(rows[0])).toEqual(['event_id', 'event_name', 'external_customer_id', 'customer_id', 'timestamp', 'source', 'properties']);
      expect(rows.map((r) => r.event_id)).toEqual(Array.from({ length: 120 }, (_, i) => `exp-${String(i).padStart(3, '0')}`));
      expect(JSON.parse(rows[7].properties)).toEqual({ i: 7, note: 'comma, "quote"\nnewline' });
      expect(rows[8].source).toBe('a,b');
      expect(rows[0].timestamp).toBe('2026-04-01T00:00:00.000000Z');
    });

    it('applies the filters: start inclusive, end exclusive, one customer; JSONL is one object per line', async () => {
      const { task, text, contentType } = await exportFile({
        entity_type: 'EVENTS',
        file_type: 'JSONL',
        filters: { start_time: '2026-04-01T00:00:10Z', end_time: '2026-04-01T00:00:40Z', external_customer_id: 'exp-b' },
      });
      expect(contentType).toMatch(/application\/x-ndjson/);
      const lines = text.trimEnd().split('\n').map((l) => JSON.parse(l));
      const expected = Array.from({ length: 30 }, (_, k) => k + 10).filter((i) => i % 3 === 0);
      expect(lines.map((l) => l.id)).toEqual(expected.map((i) => `exp-${String(i).padStart(3, '0')}`));
      expect(task.processed_records).toBe(expected.length);
      expect(lines[0]).toMatchObject({ event_name: 'storage', external_customer_id: 'exp-b', properties: { i: 12, note: 'x' } });
    });

    it('exports an empty selection as a header-only CSV', async () => {
      const { task, text } = await exportFile({ entity_type: 'EVENTS', file_type: 'CSV', filters: { external_customer_id: 'nobody' } });
      expect(task.processed_records).toBe(0);
      expect(text).toBe('event_id,event_name,external_customer_id,customer_id,timestamp,source,properties\n');
    });

    it("exports invoices (billing's own data) without line items, of one customer", async () => {
      const customer = (await api.post('/v1/customers', { external_customer_id: 'inv-exp' })).body.id;
      const plan = (await api.post('/v1/plans', { name: 'Export', prices: [fixedPrice] })).body.id;
      expect((await api.post('/v1/subscriptions', { customer_id: customer, plan_id: plan })).status).toBe(201);
      const invoices = await waitFor(async () => {
        const res = await api.get(`/v1/invoices?customer_id=${customer}`);
        return res.body.items.length > 0 ? res.body.items : undefined;
      });
      const { text } = await exportFile({ entity_type: 'INVOICES', file_type: 'CSV', filters: { external_customer_id: 'inv-exp' } });
      const rows = parse(text, { columns: true }) as Array<Record<string, string>>;
      expect(rows.map((r) => r.id)).toEqual(invoices.map((i: { id: string }) => i.id).reverse());
      expect(rows[0]).toMatchObject({ customer_id: customer, currency: 'usd', total: String(invoices[0].total), overdue: 'false' });
      expect(Object.keys(rows[0])).not.toContain('line_items');
      const json = await exportFile({ entity_type: 'INVOICES', file_type: 'JSONL', filters: { external_customer_id: 'inv-exp' } });
      expect(JSON.parse(json.text.split('\n')[0])).toMatchObject({ id: invoices[invoices.length - 1].id, total: invoices[invoices.length - 1].total });
    });
  });

  describe('lists, cancel and state', () => {
    it('lists tasks newest first with filters', async () => {
      const all = await api.get('/v1/tasks?limit=5');
      expect(all.status).toBe(200);
      expect(all.body.items.length).toBe(5);
      expect(all.body.pagination.total).toBeGreaterThan(5);
      const exports = await api.get('/v1/tasks?task_type=EXPORT&entity_type=EVENTS&task_status=COMPLETED&limit=100');
      expect(exports.body.items.length).toBeGreaterThan(0);
      for (const t of exports.body.items) expect(t).toMatchObject({ task_type: 'EXPORT', entity_type: 'EVENTS', task_status: 'COMPLETED' });
      const other = api.withKey(await stack.keyFor('tenant-z', 'production'));
      expect((await other.get('/v1/tasks')).body.pagination.total).toBe(0);
      expect((await other.get(`/v1/tasks/${all.body.items[0].id}`)).status).toBe(404);
    });

    it('cancels a running import: it stops, stays CANCELLED, and a finished task cannot be cancelled (400)', async () => {
      const rows = Array.from({ length: 20_000 }, (_, i) => ({ event_id: `cx-${i}`, event_name: 'api_call', external_customer_id: 'cx-a', timestamp: '2026-05-01T00:00:00Z' }));
      const res = await api.post('/v1/tasks/imports?entity_type=EVENTS&file_type=JSONL', jsonl(rows));
      expect(res.status).toBe(202);
      const cancelled = await api.post(`/v1/tasks/${res.body.id}/cancel`, {});
      expect(cancelled.status).toBe(200);
      expect(cancelled.body).toMatchObject({ id: res.body.id, task_status: 'CANCELLED', completed_at: expect.any(String) });
      await new Promise((r) => setTimeout(r, 1500));
      const after = (await api.get(`/v1/tasks/${res.body.id}`)).body as Task;
      expect(after.task_status).toBe('CANCELLED');
      expect(after.processed_records).toBeLessThan(20_000);
      const again = await api.post(`/v1/tasks/${res.body.id}/cancel`, {});
      expect(again.status).toBe(400);
      expect(again.body.error.message).toMatch(/CANCELLED/);
      expect((await api.get(`/v1/tasks/${res.body.id}/download`)).status).toBe(400);
      // Its upload is dropped.
      expect(Number((await db('task_chunks').where({ task_id: res.body.id }).count({ n: '*' }))[0].n)).toBe(0);
    });

    it('refuses to cancel a COMPLETED task and to download an import', async () => {
      const task = await importFile('EVENTS', 'JSONL', '');
      const res = await api.post(`/v1/tasks/${task.id}/cancel`, {});
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ success: false, error: { message: expect.stringMatching(/COMPLETED/) } });
      expect((await api.get(`/v1/tasks/${task.id}/download`)).status).toBe(400);
    });
  });

  describe('permissions and bad input', () => {
    it('needs tasks:read to read and tasks:write to create or cancel (403 in the envelope)', async () => {
      // Each key also holds the entities' permissions a task needs (ADR 0058), so only tasks:read|write differ.
      const entities = ['events:read', 'events:write', 'customers:read', 'customers:write', 'invoices:read'];
      const readOnly = api.withKey(await stack.keyFor('tenant-a', 'production', ['tasks:read', ...entities]));
      const writeOnly = api.withKey(await stack.keyFor('tenant-a', 'production', ['tasks:write', ...entities]));
      const none = api.withKey(await stack.keyFor('tenant-a', 'production', ['events:read', 'events:write']));
      const some = (await api.get('/v1/tasks?limit=1')).body.items[0].id;
      expect((await readOnly.get('/v1/tasks')).status).toBe(200);
      expect((await readOnly.get(`/v1/tasks/${some}`)).status).toBe(200);
      for (const [client, method, path] of [
        [readOnly, 'POST', '/v1/tasks'],
        [readOnly, 'POST', '/v1/tasks/imports?entity_type=EVENTS&file_type=CSV'],
        [readOnly, 'POST', `/v1/tasks/${some}/cancel`],
        [writeOnly, 'GET', '/v1/tasks'],
        [writeOnly, 'GET', `/v1/tasks/${some}`],
        [writeOnly, 'GET', `/v1/tasks/${some}/download`],
        [none, 'GET', '/v1/tasks'],
        [none, 'POST', '/v1/tasks'],
      ] as const) {
        const res = await client.call(method, path, method === 'POST' ? { task_type: 'EXPORT', entity_type: 'EVENTS', file_type: 'CSV' } : undefined);
        expect({ method, path, status: res.status }).toEqual({ method, path, status: 403 });
        expect(res.body.success).toBe(false);
      }
      expect((await writeOnly.post('/v1/tasks', { task_type: 'EXPORT', entity_type: 'EVENTS', file_type: 'CSV' })).status).toBe(202);
    });

    it("needs the entity's permission too (ADR 0058): tasks:read|write alone exports, imports and reads nothing", async () => {
      const tasksOnly = api.withKey(await stack.keyFor('tenant-a', 'production', ['tasks:read', 'tasks:write']));
      const denied = (res: { status: number; body: { error?: { details?: { permission?: string } } } }) => [res.status, res.body.error?.details?.permission];
      const before = Number((await db('tasks').count({ n: '*' }))[0].n);
      expect(denied(await tasksOnly.post('/v1/tasks', { task_type: 'EXPORT', entity_type: 'CUSTOMERS', file_type: 'JSONL' }))).toEqual([403, 'customers:read']);
      expect(denied(await tasksOnly.post('/v1/tasks/imports?entity_type=EVENTS&file_type=JSONL', '{}\n', { 'content-type': 'text/plain' }))).toEqual([403, 'events:write']);
      expect(denied(await tasksOnly.post('/v1/tasks/imports?entity_type=CUSTOMERS&file_type=JSONL', '{}\n', { 'content-type': 'text/plain' }))).toEqual([403, 'customers:write']);
      expect(Number((await db('tasks').count({ n: '*' }))[0].n)).toBe(before);
      const { task } = await exportFile({ entity_type: 'INVOICES', file_type: 'CSV' });
      expect(denied(await tasksOnly.get(`/v1/tasks/${task.id}`))).toEqual([403, 'invoices:read']);
      expect(denied(await tasksOnly.get(`/v1/tasks/${task.id}/download`))).toEqual([403, 'invoices:read']);
      expect((await tasksOnly.get('/v1/tasks')).body.pagination.total).toBe(0);
      const invoiceReader = api.withKey(await stack.keyFor('tenant-a', 'production', ['tasks:read', 'invoices:read']));
      expect((await invoiceReader.get(`/v1/tasks/${task.id}/download`)).status).toBe(200);
    });

    it('answers 400 with the field for every bad export body, query and id, writing nothing', async () => {
      const before = Number((await db('tasks').count({ n: '*' }))[0].n);
      const bodies: Array<[unknown, string]> = [
        [{ entity_type: 'EVENTS', file_type: 'CSV' }, 'task_type'],
        [{ task_type: 'IMPORT', entity_type: 'EVENTS', file_type: 'CSV' }, 'task_type'],
        [{ task_type: 'EXPORT', entity_type: 'PLANS', file_type: 'CSV' }, 'entity_type'],
        [{ task_type: 'EXPORT', entity_type: 'EVENTS', file_type: 'XLSX' }, 'file_type'],
        [{ task_type: 'EXPORT', entity_type: 'EVENTS', file_type: 'CSV', filters: { start_time: 'today' } }, 'filters.start_time'],
        [{ task_type: 'EXPORT', entity_type: 'EVENTS', file_type: 'CSV', filters: { start_time: '2026-01-02T00:00:00Z', end_time: '2026-01-01T00:00:00Z' } }, 'filters.end_time'],
        [{ task_type: 'EXPORT', entity_type: 'EVENTS', file_type: 'CSV', filters: { customer: 'x' } }, 'filters'],
        [{ task_type: 'EXPORT', entity_type: 'EVENTS', file_type: 'CSV', extra: true }, ''],
      ];
      for (const [body, field] of bodies) {
        const res = await api.post('/v1/tasks', body);
        expect({ body, status: res.status }).toEqual({ body, status: 400 });
        expect(res.body.success).toBe(false);
        if (field) expect(JSON.stringify(res.body.error.details)).toContain(field);
      }
      for (const query of ['', 'entity_type=EVENTS', 'file_type=CSV', 'entity_type=INVOICES&file_type=CSV', 'entity_type=EVENTS&file_type=XML', 'entity_type=EVENTS&file_type=CSV&x=1']) {
        const res = await api.post(`/v1/tasks/imports?${query}`, 'a,b\n', { 'content-type': 'text/csv' });
        expect({ query, status: res.status }).toEqual({ query, status: 400 });
        expect(res.body.success).toBe(false);
      }
      for (const path of ['/v1/tasks?limit=0', '/v1/tasks?task_status=DONE', '/v1/tasks?task_type=X', '/v1/tasks?foo=1']) {
        expect({ path, status: (await api.get(path)).status }).toEqual({ path, status: 400 });
      }
      expect((await api.post('/v1/tasks', 'not json', { 'content-type': 'application/json' })).status).toBe(400);
      for (const path of ['/v1/tasks/task_nope', '/v1/tasks/task_nope/download']) expect((await api.get(path)).status).toBe(404);
      expect((await api.post('/v1/tasks/task_nope/cancel', {})).status).toBe(404);
      expect((await api.post('/v1/tasks/task_nope/cancel', { x: 1 })).status).toBe(400);
      expect(Number((await db('tasks').count({ n: '*' }))[0].n)).toBe(before);
    });

    it('answers 413 in the envelope for a file over 100 MiB, keeping no task and no piece of it', async () => {
      const before = Number((await db('tasks').count({ n: '*' }))[0].n);
      // Input pieces only: an export started by an earlier test may still write its output.
      const inputs = async () => Number((await db('task_chunks').where({ kind: 'input' }).count({ n: '*' }))[0].n);
      const chunksBefore = await inputs();
      const big = Buffer.alloc(100 * 1024 * 1024 + 1, 'a');
      const res = await api.call('POST', '/v1/tasks/imports?entity_type=EVENTS&file_type=JSONL', big.toString(), { 'content-type': 'application/x-ndjson' });
      expect(res.status).toBe(413);
      expect(res.body).toMatchObject({ success: false, error: { details: { limit_bytes: 100 * 1024 * 1024 } } });
      expect(Number((await db('tasks').count({ n: '*' }))[0].n)).toBe(before);
      expect(await inputs()).toBe(chunksBefore);
    }, 60_000);
  });
});
