import { request as httpRequest } from 'node:http';
import { Readable } from 'node:stream';
import { request } from 'undici';
import { createDb, type Db } from '@billstream/db';
import { waitFor, type ApiClient } from '@billstream/testing';
import { parse } from 'csv-parse/sync';
import { startProcessStack, type ProcessStack, type Replica } from './support/stack';

/**
 * Issue #15's durability of tasks on six real processes (real Postgres and Kafka), every call
 * through the gateway: the billing process that runs a task is SIGKILLed in the middle of it and
 * started again (the task resumes from its last checkpoint and ends COMPLETED with every row
 * exactly once), and two billing replicas share tasks without ever running one twice. The
 * billing schema is read only to look at claims and attempts.
 *
 * Claims last 2 s (TASKS_LEASE_MS) so that a killed runner's task is taken again within the
 * test; batches are small (TASKS_BATCH_ROWS 200) so that a kill lands mid-task.
 */
const SEEDED = 30_000;
const SMALL_BATCHES = { TASKS_POLL_MS: '100', TASKS_LEASE_MS: '2000', TASKS_BATCH_ROWS: '200' };

interface TaskRow {
  id: string;
  task_status: string;
  processed_records: string;
  attempts: number;
  claimed_by: string | null;
}

const jsonl = (rows: unknown[]) => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';
const events = (customer: string, n: number, prefix: string) =>
  Array.from({ length: n }, (_, i) => ({
    event_id: `${prefix}-${String(i).padStart(6, '0')}`,
    event_name: 'api_call',
    external_customer_id: customer,
    timestamp: new Date(Date.UTC(2026, 5, 1) + i * 1000).toISOString(),
    properties: { i, note: 'a, "b"' },
  }));

describe('tasks survive the restart of their process and run once across replicas (e2e: real processes, Postgres and Kafka)', () => {
  let stack: ProcessStack;
  let api: ApiClient;
  let db: Db;

  const task = async (id: string) => (await db<TaskRow>('tasks').where({ id }).first()) as TaskRow;
  const stored = async (customer: string) => (await api.post('/v1/events/query', { external_customer_id: customer, page_size: 1 })).body.total_count as number;
  const finished = (id: string, timeoutMs = 120_000) =>
    waitFor(
      async () => {
        const t = await task(id);
        return ['COMPLETED', 'FAILED', 'CANCELLED'].includes(t.task_status) ? t : undefined;
      },
      { timeoutMs, intervalMs: 100, what: `task ${id} to finish` },
    );

  beforeAll(async () => {
    stack = await startProcessStack({ env: { billing: { BILLING_INTERVAL_MS: '0', TASKS_POLL_MS: '100' } } });
    api = stack.api;
    db = createDb({ databaseUrl: stack.database.url, schema: 'billing', poolMax: 4 });
    // The seed goes in through an import task itself (default batches).
    const res = await api.post('/v1/tasks/imports?entity_type=EVENTS&file_type=JSONL', jsonl(events('seed', SEEDED, 'seed')), { 'content-type': 'application/x-ndjson' });
    expect(res.status).toBe(202);
    expect((await finished(res.body.id)).task_status).toBe('COMPLETED');
    await waitFor(async () => (await stored('seed')) === SEEDED, { timeoutMs: 120_000, intervalMs: 250, what: 'the seed events to be stored' });
    await stack.restart('billing', { BILLING_INTERVAL_MS: '0', ...SMALL_BATCHES });
  }, 300_000);

  afterAll(async () => {
    await db?.destroy();
    await stack?.stop();
  }, 120_000);

  /** SIGKILLs billing once `id` has committed some batches but not all; answers the progress it had. */
  async function killMidTask(id: string, total: number): Promise<number> {
    const progress = await waitFor(
      async () => {
        const t = await task(id);
        const n = Number(t.processed_records);
        if (t.task_status === 'COMPLETED') throw new Error('the task finished before the kill');
        return t.task_status === 'PROCESSING' && n >= 1000 ? n : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 10, what: 'the task to be part done' },
    );
    await stack.kill('billing');
    const after = await task(id);
    expect(after.task_status).toBe('PROCESSING');
    expect(Number(after.processed_records)).toBeLessThan(total);
    return progress;
  }

  it('an export whose process is SIGKILLed resumes at its checkpoint after a restart: every event once, in order', async () => {
    const res = await api.post('/v1/tasks', { task_type: 'EXPORT', entity_type: 'EVENTS', file_type: 'CSV', filters: { external_customer_id: 'seed' } });
    expect(res.status).toBe(202);
    await killMidTask(res.body.id, SEEDED);
    // While billing is down the API answers in the envelope, not a hang.
    expect((await api.get(`/v1/tasks/${res.body.id}`)).status).toBe(503);
    await stack.restart('billing', { BILLING_INTERVAL_MS: '0', ...SMALL_BATCHES });
    const done = await finished(res.body.id);
    expect(done).toMatchObject({ task_status: 'COMPLETED', attempts: 2 });
    const view = (await api.get(`/v1/tasks/${res.body.id}`)).body;
    expect(view).toMatchObject({ processed_records: SEEDED, successful_records: SEEDED, total_records: SEEDED });
    const file = await api.get(`/v1/tasks/${res.body.id}/download`);
    expect(file.status).toBe(200);
    const rows = parse(file.text, { columns: true }) as Array<Record<string, string>>;
    expect(rows).toHaveLength(SEEDED);
    expect(rows.map((r) => r.event_id)).toEqual(events('seed', SEEDED, 'seed').map((e) => e.event_id));
    expect(JSON.parse(rows[123].properties)).toEqual({ i: 123, note: 'a, "b"' });
  }, 240_000);

  it('an import whose process is SIGKILLed resumes after a restart: exact counts, each event stored once', async () => {
    const N = 20_000;
    const res = await api.post('/v1/tasks/imports?entity_type=EVENTS&file_type=JSONL', jsonl(events('crash-imp', N, 'ci')));
    expect(res.status).toBe(202);
    await killMidTask(res.body.id, N);
    await stack.restart('billing', { BILLING_INTERVAL_MS: '0', ...SMALL_BATCHES });
    const done = await finished(res.body.id);
    expect(done.attempts).toBe(2);
    const view = (await api.get(`/v1/tasks/${res.body.id}`)).body;
    expect(view).toMatchObject({ task_status: 'COMPLETED', processed_records: N, successful_records: N, failed_records: 0 });
    await waitFor(async () => (await stored('crash-imp')) === N, { timeoutMs: 60_000, intervalMs: 250, what: `${N} imported events` });
    // The batch in flight at the kill was published again on resume: deduplicated, not stored twice.
    await new Promise((r) => setTimeout(r, 2000));
    expect(await stored('crash-imp')).toBe(N);
  }, 240_000);

  it('two billing replicas share tasks and never run the same one (each ran once, by one runner)', async () => {
    let replica: Replica | undefined;
    try {
      replica = await stack.startReplica('billing', { BILLING_INTERVAL_MS: '0', ...SMALL_BATCHES });
      const ids: string[] = [];
      for (let i = 0; i < 8; i += 1) {
        const res = await api.post('/v1/tasks', { task_type: 'EXPORT', entity_type: 'EVENTS', file_type: i % 2 ? 'CSV' : 'JSONL', filters: { external_customer_id: 'seed' } });
        expect(res.status).toBe(202);
        ids.push(res.body.id);
      }
      const done = await Promise.all(ids.map((id) => finished(id, 180_000)));
      for (const t of done) expect(t).toMatchObject({ task_status: 'COMPLETED', attempts: 1 });
      // Both processes ran some of them.
      expect(new Set(done.map((t) => t.claimed_by)).size).toBe(2);
      for (const id of ids) {
        const view = (await api.get(`/v1/tasks/${id}`)).body;
        expect(view.processed_records).toBe(SEEDED);
        const file = await api.get(`/v1/tasks/${id}/download`);
        const lines = file.text.trimEnd().split('\n');
        expect(lines).toHaveLength(view.file_type === 'CSV' ? SEEDED + 1 : SEEDED);
      }
    } finally {
      await replica?.kill();
    }
  }, 300_000);

  it('streams an upload through the gateway process: a chunked body over 100 MiB is 413 in the envelope and leaves nothing', async () => {
    const count = async (table: string) => Number((await db(table).count({ n: '*' }))[0].n);
    const [tasksBefore, chunksBefore] = [await count('tasks'), await count('task_chunks')];
    const piece = Buffer.alloc(1024 * 1024, 'a');
    async function* body() {
      for (let i = 0; i < 101; i += 1) yield piece; // 101 MiB, no Content-Length: chunked
    }
    const res = await request(`${stack.urls.gateway}/v1/tasks/imports?entity_type=EVENTS&file_type=JSONL`, {
      method: 'POST',
      headers: { authorization: `Bearer ${api.key}`, 'content-type': 'application/x-ndjson' },
      body: Readable.from(body()),
    }).catch((err: Error) => err);
    if (res instanceof Error) throw res;
    expect(res.statusCode).toBe(413);
    expect(await res.body.json()).toMatchObject({ success: false, error: { details: { limit_bytes: 100 * 1024 * 1024 } } });
    // A Content-Length over the limit is refused before a byte of the body is read.
    const declared = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const url = new URL(`${stack.urls.gateway}/v1/tasks/imports?entity_type=EVENTS&file_type=CSV`);
      const req = httpRequest(
        { host: url.hostname, port: url.port, path: url.pathname + url.search, method: 'POST', headers: { authorization: `Bearer ${api.key}`, 'content-length': String(100 * 1024 * 1024 + 1) } },
        (r) => {
          let text = '';
          r.on('data', (c: Buffer) => (text += c.toString()));
          r.on('end', () => {
            resolve({ status: r.statusCode ?? 0, text });
            req.destroy();
          });
        },
      );
      req.on('error', reject);
      req.write('event_id\n');
    });
    expect(declared.status).toBe(413);
    expect(JSON.parse(declared.text)).toMatchObject({ success: false });
    // Billing learns of the aborted upstream upload a moment after the gateway answered: it
    // deletes the unfinished (never visible) task and its pieces.
    await waitFor(async () => (await count('tasks')) === tasksBefore && (await count('task_chunks')) === chunksBefore, {
      timeoutMs: 10_000,
      what: 'the refused upload to leave nothing',
    });
    expect((await api.get('/v1/tasks?limit=1000')).body.items.filter((t: { task_status: string }) => t.task_status === 'UPLOADING')).toEqual([]);
  }, 120_000);
});
