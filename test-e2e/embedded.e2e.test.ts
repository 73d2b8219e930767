import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApiClient, freePort, waitFor } from '@billstream/testing';
import { npmStart, stop, type Started } from './support/npm-start';

const ROOT = path.resolve(__dirname, '..');

// A first start runs initdb inside WebAssembly: allow a slow, busy machine.
jest.setTimeout(600_000);

describe('npm start: the embedded default', () => {
  let dataDir: string;
  let running: Started | undefined;
  let devKey: string;
  let apiUrl: string;

  beforeAll(() => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'billstream-embedded-'));
  });
  afterAll(async () => {
    if (running) await stop(running);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('starts from an empty data directory, prints a development key, serves /healthz and answers a call made with that key', async () => {
    const port = await freePort();
    running = npmStart(dataDir, port);
    const printed = await waitFor(() => /API key:\s+(bsk_\S+)/.exec(running!.output())?.[1], {
      timeoutMs: 540_000,
      intervalMs: 250,
      what: 'the printed API key',
    }).catch((err) => {
      throw new Error(`${String(err)}\n${running!.output()}`);
    });
    devKey = printed;
    expect(running.output()).toContain(`Billstream is running at http://127.0.0.1:${port}`);
    expect(running.output()).toContain(`database: embedded PGlite in ${path.join(dataDir, 'pglite')}`);
    expect(readFileSync(path.join(dataDir, 'dev-api-key'), 'utf8').trim()).toBe(printed);

    const health = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(health.status).toBe(200);
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
    expect(ready.status).toBe(200);

    const api = new ApiClient(`http://127.0.0.1:${port}`, printed);
    const keys = await api.get('/v1/api-keys');
    expect(keys.status).toBe(200);
    expect(keys.body.items[0]).toMatchObject({ tenant_id: 'default', environment_id: 'development', permissions: ['*'] });
    const anonymous = await api.withKey(undefined).get('/v1/api-keys');
    expect(anonymous.status).toBe(401);
    // Billing runs in the embedded default too (its migrations on PGlite included).
    const plan = await api.post('/v1/plans', {
      name: 'Starter',
      prices: [{ type: 'FIXED', currency: 'usd', amount: '9', billing_model: 'FLAT_FEE', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE' }],
    });
    expect(plan.status).toBe(201);

    // A second start on the same directory keeps its data and the same key.
    await stop(running);
    running = npmStart(dataDir, port);
    await waitFor(() => running!.output().includes('Billstream is running'), { timeoutMs: 540_000, intervalMs: 250, what: 'restart' });
    expect(running.output()).toContain(printed);
    const again = await api.get('/v1/api-keys');
    expect(again.status).toBe(200);
    expect(again.body.pagination.total).toBe(keys.body.pagination.total);
    expect((await api.get(`/v1/plans/${plan.body.id}`)).body.prices[0].amount).toBe('9');
    apiUrl = `http://127.0.0.1:${port}`;
  });

  // The services share the one session of the embedded database: calls that cross services
  // (outbox relays publishing to the other services' consumers through the in-process bus,
  // the wallet asking the customer service, debits grouped into one transaction) must all
  // finish, with the right results.
  it('answers many parallel calls that cross services, on the one embedded database, without deadlock', async () => {
    const api = new ApiClient(apiUrl, devKey);
    const run = Date.now().toString(36);
    const createCustomer = async (n: string) => {
      const res = await api.post('/v1/customers', { external_customer_id: `emb-${run}-${n}` });
      expect(res.status).toBe(201);
      return res.body.id as string;
    };
    const customers = await Promise.all(Array.from({ length: 8 }, (_, i) => createCustomer(`w${i}`)));
    const wallets = await Promise.all(
      customers.map(async (customerId) => {
        const res = await api.post('/v1/wallets', { customer_id: customerId, currency: 'usd', initial_credits_to_load: '100' });
        expect(res.status).toBe(201);
        return res.body.id as string;
      }),
    );

    const eventsBefore = (await api.post('/v1/events/query', { page_size: 1 })).body.total_count as number;
    const now = Date.now();
    const calls: Array<Promise<number>> = [
      ...wallets.flatMap((id) =>
        Array.from({ length: 10 }, (_, i) => api.post(`/v1/wallets/${id}/debit`, { credits: '1.5', idempotency_key: `d-${i}` }).then((r) => r.status)),
      ),
      ...Array.from({ length: 20 }, (_, i) => api.post('/v1/customers', { external_customer_id: `emb-${run}-c${i}` }).then((r) => r.status)),
      ...Array.from({ length: 5 }, (_, b) =>
        api
          .post('/v1/events/bulk', {
            events: Array.from({ length: 40 }, (_, i) => ({
              event_name: 'api_call',
              external_customer_id: `emb-${run}-c${i % 20}`,
              timestamp: new Date(now - b * 1000 - i).toISOString(),
              properties: { b, i },
            })),
          })
          .then((r) => r.status),
      ),
    ];
    const statuses = await Promise.all(calls);
    expect(statuses.filter((s) => s === 201)).toHaveLength(80 + 20);
    expect(statuses.filter((s) => s === 202)).toHaveLength(5);

    for (const id of wallets) {
      const res = await api.get(`/v1/wallets/${id}`);
      expect([res.status, res.body.credit_balance]).toEqual([200, '85']);
    }
    const listed = await api.get(`/v1/customers?limit=1`);
    expect(listed.body.pagination.total).toBe(28);
    await waitFor(
      async () => ((await api.post('/v1/events/query', { page_size: 1 })).body.total_count as number) === eventsBefore + 200,
      { timeoutMs: 60_000, intervalMs: 500, what: '200 more events stored' },
    );

    // A deleted customer's wallet is closed by the wallet service's consumer of customer events.
    expect((await api.delete(`/v1/customers/${customers[0]}`)).status).toBe(204);
    await waitFor(async () => (await api.get(`/v1/wallets/${wallets[0]}`)).body.wallet_status === 'closed', {
      timeoutMs: 60_000,
      intervalMs: 250,
      what: 'the wallet of the deleted customer to close',
    });
  });

  it('runs export and import tasks on PGlite and the in-process bus (issue #15)', async () => {
    const api = new ApiClient(apiUrl, devKey);
    const rows = Array.from({ length: 300 }, (_, i) => ({ event_id: `emb-task-${i}`, event_name: 'api_call', external_customer_id: 'emb-task', timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString() }));
    const imported = await api.post('/v1/tasks/imports?entity_type=EVENTS&file_type=JSONL', rows.map((r) => JSON.stringify(r)).join('\n'), { 'content-type': 'application/x-ndjson' });
    expect(imported.status).toBe(202);
    const done = await waitFor(async () => {
      const t = (await api.get(`/v1/tasks/${imported.body.id}`)).body;
      return t.task_status === 'COMPLETED' ? t : undefined;
    }, { timeoutMs: 60_000, what: 'the import to complete' });
    expect(done).toMatchObject({ successful_records: 300, failed_records: 0 });
    await waitFor(async () => (await api.post('/v1/events/query', { external_customer_id: 'emb-task', page_size: 1 })).body.total_count === 300, { timeoutMs: 60_000 });
    const exported = await api.post('/v1/tasks', { task_type: 'EXPORT', entity_type: 'EVENTS', file_type: 'CSV', filters: { external_customer_id: 'emb-task' } });
    expect(exported.status).toBe(202);
    await waitFor(async () => (await api.get(`/v1/tasks/${exported.body.id}`)).body.task_status === 'COMPLETED', { timeoutMs: 60_000, what: 'the export to complete' });
    const file = await api.get(`/v1/tasks/${exported.body.id}/download`);
    expect(file.status).toBe(200);
    expect(file.text.trimEnd().split('\n')).toHaveLength(301);
  });

  it('answers other requests while a long import holds the one database between its steps (issue #30)', async () => {
    const api = new ApiClient(apiUrl, devKey);
    const n = 30_000;
    const lines = Array.from({ length: n }, (_, i) =>
      JSON.stringify({ event_id: `emb-long-${i}`, event_name: 'api_call', external_customer_id: `emb-long-${i % 50}`, timestamp: new Date(Date.UTC(2026, 1, 1) + i * 1000).toISOString() }),
    );
    const imported = await api.post('/v1/tasks/imports?entity_type=EVENTS&file_type=JSONL', lines.join('\n'), { 'content-type': 'application/x-ndjson' });
    expect(imported.status).toBe(202);
    // Once it runs, requests are answered between its steps: before it ends, not after it.
    await waitFor(async () => (await api.get(`/v1/tasks/${imported.body.id}`)).body.processed_records > 0, { timeoutMs: 60_000, intervalMs: 20, what: 'the import to start' });
    for (let i = 0; i < 5; i += 1) expect((await api.get('/v1/customers?limit=20')).status).toBe(200);
    const during = (await api.get(`/v1/tasks/${imported.body.id}`)).body;
    expect(['PENDING', 'PROCESSING']).toContain(during.task_status);
    expect(during.processed_records).toBeLessThan(n);
    const done = await waitFor(async () => {
      const t = (await api.get(`/v1/tasks/${imported.body.id}`)).body;
      return t.task_status === 'COMPLETED' ? t : undefined;
    }, { timeoutMs: 300_000, intervalMs: 250, what: 'the long import to complete' });
    expect(done).toMatchObject({ successful_records: n, failed_records: 0 });
  });

  it('keeps one database in DATA_DIR/pglite, every service\'s tables in its own schema', async () => {
    await stop(running!);
    running = undefined;
    // The development key, the document links' key (kept beside the database, never in it: ADR 0059) and the database.
    expect(readdirSync(dataDir).sort()).toEqual(['dev-api-key', 'document-link-secret', 'pglite']);
    // PGlite loads modules with dynamic import(), which Jest's sandbox refuses: read it from a process of its own.
    const script = `
      const { PGlite } = require('@electric-sql/pglite');
      PGlite.create(process.argv[1]).then(async (db) => {
        const { rows } = await db.query("SELECT table_schema, table_name FROM information_schema.tables WHERE table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY 1, 2");
        await db.close();
        process.stdout.write(JSON.stringify(rows));
      });`;
    const result = spawnSync(process.execPath, ['-e', script, path.join(dataDir, 'pglite')], { cwd: ROOT, encoding: 'utf8', timeout: 240_000 });
    expect(result.status).toBe(0);
    const tables = JSON.parse(result.stdout) as Array<{ table_schema: string; table_name: string }>;
    const schemaOf = (table: string) => tables.filter((t) => t.table_name === table).map((t) => t.table_schema);
    expect([...new Set(tables.map((t) => t.table_schema))].sort()).toEqual(['billing', 'customer', 'entitlements', 'gateway', 'ingestion', 'wallet', 'webhook']);
    expect(schemaOf('wallets')).toEqual(['wallet']);
    expect(schemaOf('api_keys')).toEqual(['gateway']);
    expect(schemaOf('endpoints')).toEqual(['webhook']);
    expect(schemaOf('meters')).toEqual(['ingestion']);
    // The entitlements service's projection holds the granting subscriptions too (ADR 0061).
    expect(schemaOf('subscriptions')).toEqual(['billing', 'entitlements']);
    for (const table of ['outbox', 'processed_messages', 'knex_migrations']) {
      expect(schemaOf(table).sort()).toEqual(['billing', 'customer', 'entitlements', 'gateway', 'ingestion', 'wallet', 'webhook']);
    }
  });

  it('refuses a bad setting at start with a message naming the variable', () => {
    const env = { ...process.env, PORT: 'not-a-port', DATA_DIR: dataDir };
    const result = spawnSync(process.execPath, [path.join(ROOT, 'services/standalone/dist/main.js')], { env, encoding: 'utf8' });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('PORT');
  });
});
