import os from 'node:os';
import path from 'node:path';
import { rmSync } from 'node:fs';
import { ALL_ROUTES, type RouteDef } from '@billstream/contracts';
import { buildOpenApiDocument } from '@billstream/gateway';
import { startEmbedded, type Embedded } from '@billstream/standalone';
import { ApiClient, capturingLogger, createTestDatabase, kafkaBrokers, randomKey, uniqueTopicPrefix, waitFor, type ApiResponse, type TestDatabase } from '@billstream/testing';
import { startIntegrationStack, TEST_ENVIRONMENT, TEST_TENANT, type IntegrationStack } from '../../support/stack';

/**
 * Issue #47 items 3a, 3b and 5b (ADR 0058) as a client meets them, through a gateway that
 * forwards to the services over loopback HTTP (as separate deployments do) on real Postgres
 * and Kafka: a task needs its entity's permission, a key revokes only keys whose permissions
 * it holds, the bootstrap and development keys come back at start, and every POST/PUT/PATCH
 * of the registry refuses an unknown body field (400 naming it) before any lookup.
 */

const denied = (res: ApiResponse) => [res.status, res.body?.error?.internal_error, res.body?.error?.details?.permission];

describe('permissions of what a call reaches, through the gateway over HTTP (real Postgres and Kafka)', () => {
  let stack: IntegrationStack;
  let api: ApiClient;
  const keyWith = async (permissions: string[]) => api.withKey(await stack.keyFor(TEST_TENANT, TEST_ENVIRONMENT, permissions));

  beforeAll(async () => {
    stack = await startIntegrationStack({ extra: { inProcessCalls: false, env: { TASKS_POLL_MS: '100' } } });
    api = stack.api;
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
  }, 120_000);

  const finished = (id: string) =>
    waitFor(
      async () => {
        const t = (await api.get(`/v1/tasks/${id}`)).body;
        return ['COMPLETED', 'FAILED', 'CANCELLED'].includes(t.task_status) ? t : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 100, what: `task ${id}` },
    );
  const exportOf = (entity: string) => ({ task_type: 'EXPORT', entity_type: entity, file_type: 'CSV' });
  const taskTotal = async () => (await api.get('/v1/tasks?limit=1')).body.pagination.total as number;

  describe('3a: a task needs the permission of the entity it reads or writes', () => {
    it('tasks:read|write alone exports and imports nothing: 403 naming the entity permission, nothing created', async () => {
      const customer = await api.post('/v1/customers', { external_customer_id: 'perm-secret', name: 'Secret Person', email: 'secret@person.test' });
      expect(customer.status).toBe(201);
      const tasksOnly = await keyWith(['tasks:read', 'tasks:write']);
      expect(denied(await tasksOnly.get('/v1/customers'))).toEqual([403, 'permission_denied', 'customers:read']);
      const before = await taskTotal();
      for (const [entity, permission] of [
        ['CUSTOMERS', 'customers:read'],
        ['EVENTS', 'events:read'],
        ['INVOICES', 'invoices:read'],
      ]) {
        expect({ entity, answer: denied(await tasksOnly.post('/v1/tasks', exportOf(entity))) }).toEqual({ entity, answer: [403, 'permission_denied', permission] });
      }
      const csv = 'external_customer_id,name\nperm-imported,Imported\n';
      expect(denied(await tasksOnly.post('/v1/tasks/imports?entity_type=CUSTOMERS&file_type=CSV', csv, { 'content-type': 'text/csv' }))).toEqual([403, 'permission_denied', 'customers:write']);
      const events = 'event_name,external_customer_id,timestamp\napi_call,perm-secret,2026-01-01T00:00:00Z\n';
      expect(denied(await tasksOnly.post('/v1/tasks/imports?entity_type=EVENTS&file_type=CSV', events, { 'content-type': 'text/csv' }))).toEqual([403, 'permission_denied', 'events:write']);
      // Nothing was created: no task, no customer.
      expect(await taskTotal()).toBe(before);
      expect((await api.get('/v1/customers/external/perm-imported')).status).toBe(404);
    });

    it("reading, downloading or cancelling a task needs its entity's read permission; the list shows only readable entities", async () => {
      const customers = (await api.post('/v1/tasks', exportOf('CUSTOMERS'))).body.id as string;
      const events = (await api.post('/v1/tasks', exportOf('EVENTS'))).body.id as string;
      expect((await finished(customers)).task_status).toBe('COMPLETED');
      expect((await finished(events)).task_status).toBe('COMPLETED');

      const tasksOnly = await keyWith(['tasks:read', 'tasks:write']);
      expect(denied(await tasksOnly.get(`/v1/tasks/${customers}`))).toEqual([403, 'permission_denied', 'customers:read']);
      expect(denied(await tasksOnly.get(`/v1/tasks/${customers}/download`))).toEqual([403, 'permission_denied', 'customers:read']);
      expect(denied(await tasksOnly.post(`/v1/tasks/${customers}/cancel`, {}))).toEqual([403, 'permission_denied', 'customers:read']);
      expect(denied(await tasksOnly.get('/v1/tasks?entity_type=CUSTOMERS'))).toEqual([403, 'permission_denied', 'customers:read']);
      const none = await tasksOnly.get('/v1/tasks');
      expect([none.status, none.body.items, none.body.pagination.total]).toEqual([200, [], 0]);

      const customerReader = await keyWith(['tasks:read', 'tasks:write', 'customers:read']);
      const file = await customerReader.get(`/v1/tasks/${customers}/download`);
      expect(file.status).toBe(200);
      expect(file.text).toContain('secret@person.test');
      expect(denied(await customerReader.get(`/v1/tasks/${events}`))).toEqual([403, 'permission_denied', 'events:read']);
      const listed = await customerReader.get('/v1/tasks?limit=1000');
      expect(listed.status).toBe(200);
      expect(listed.body.items.map((t: { id: string }) => t.id)).toContain(customers);
      expect(new Set(listed.body.items.map((t: { entity_type: string }) => t.entity_type))).toEqual(new Set(['CUSTOMERS']));
      expect(listed.body.pagination.total).toBe(listed.body.items.length);
      const all = await api.get('/v1/tasks?limit=1000');
      expect(all.body.items.map((t: { id: string }) => t.id)).toEqual(expect.arrayContaining([customers, events]));

      // With the entity's permission the export starts (202).
      const started = await customerReader.post('/v1/tasks', exportOf('CUSTOMERS'));
      expect(started.status).toBe(202);
      await finished(started.body.id);
    });

    it('an import with the entity write permission runs and writes through the owner', async () => {
      const importer = await keyWith(['tasks:read', 'tasks:write', 'customers:read', 'customers:write']);
      const res = await importer.post('/v1/tasks/imports?entity_type=CUSTOMERS&file_type=CSV', 'external_customer_id,name\nperm-imported-2,Imported\n', {
        'content-type': 'text/csv',
      });
      expect(res.status).toBe(202);
      expect(await finished(res.body.id)).toMatchObject({ task_status: 'COMPLETED', successful_records: 1 });
      expect((await api.get('/v1/customers/external/perm-imported-2')).body.name).toBe('Imported');
    });
  });

  describe('3b: a key revokes only keys whose permissions it holds', () => {
    it("403 for a key with a permission the revoker lacks, a * key included; the key stays valid; one within the revoker's permissions is revoked", async () => {
      const revoker = await keyWith(['api_keys:read', 'api_keys:write', 'customers:read']);
      const star = await api.post('/v1/api-keys', { name: 'admin', permissions: ['*'] });
      const wider = await api.post('/v1/api-keys', { name: 'wider', permissions: ['customers:read', 'customers:write'] });
      const narrower = await api.post('/v1/api-keys', { name: 'narrower', permissions: ['customers:read'] });
      const bootstrapId = (await api.get('/v1/api-keys?limit=1000')).body.items.find((k: { name: string }) => k.name === 'bootstrap').id;

      for (const [id, missing] of [
        [star.body.id, ['*']],
        [bootstrapId, ['*']],
        [wider.body.id, ['customers:write']],
      ]) {
        const res = await revoker.delete(`/v1/api-keys/${id}`);
        expect({ id, status: res.status, body: res.body?.error }).toEqual({
          id,
          status: 403,
          body: expect.objectContaining({ internal_error: 'permission_denied', details: { field: 'id', permission: missing[0], missing } }),
        });
      }
      // Refused revokes changed nothing: the keys still answer.
      expect((await api.withKey(star.body.key).get('/v1/customers')).status).toBe(200);
      expect((await api.withKey(wider.body.key).get('/v1/customers')).status).toBe(200);
      expect((await api.get('/v1/customers')).status).toBe(200);

      expect((await revoker.delete(`/v1/api-keys/${narrower.body.id}`)).status).toBe(204);
      await waitFor(async () => (await api.withKey(narrower.body.key).get('/v1/customers')).status === 401, { timeoutMs: 10_000, what: 'revoked key refused' });
      // A * key may revoke a * key.
      expect((await api.delete(`/v1/api-keys/${star.body.id}`)).status).toBe(204);
    });
  });

  describe('5b: an unknown body field is 400 naming it, before any lookup, on every POST/PUT/PATCH', () => {
    const document = buildOpenApiDocument();
    const withBody = ALL_ROUTES.filter((r) => ['post', 'put', 'patch'].includes(r.method) && !r.rawBody && !r.signedLink);

    function requestOf(route: RouteDef): { path: string; body: Record<string, unknown> } {
      const op = document.paths[route.path.replace(/:([A-Za-z_]\w*)/g, '{$1}')][route.method] as {
        parameters?: Array<{ name: string; in: string; example?: unknown }>;
        requestBody?: { content: Record<string, { example?: Record<string, unknown> }> };
      };
      const idOf = (name: string) => String(op.parameters?.find((p) => p.in === 'path' && p.name === name)?.example ?? `unknown_${name}`);
      const example = op.requestBody?.content['application/json']?.example ?? {};
      // The query's examples (PUT /v1/customers needs ?external_customer_id=), so only the body is wrong.
      const query = (op.parameters ?? [])
        .filter((q) => q.in === 'query' && q.example !== undefined)
        .map((q) => `${encodeURIComponent(q.name)}=${encodeURIComponent(String(q.example))}`)
        .join('&');
      const at = route.path.replace(/:([A-Za-z_]\w*)/g, (_m, name: string) => encodeURIComponent(idOf(name)));
      return { path: query ? `${at}?${query}` : at, body: { ...example, zz_unknown_field: 1 } };
    }

    it('walks every route: the registry has a body schema for each', () => {
      expect(withBody.length).toBeGreaterThan(50);
      expect(withBody.filter((r) => !r.body).map((r) => `${r.method} ${r.path}`)).toEqual([]);
    });

    it.each(withBody.map((r) => [`${r.method.toUpperCase()} ${r.path}`, r] as const))('%s with an unknown field and unknown ids: 400 naming the field', async (_name, route) => {
      const { path: p, body } = requestOf(route);
      const res = await api.call(route.method.toUpperCase(), p, body);
      expect({ status: res.status, code: res.body?.error?.internal_error, field: res.body?.error?.details?.field }).toEqual({
        status: 400,
        code: 'validation_error',
        field: 'zz_unknown_field',
      });
    });

    it('POST /v1/credit_notes/{id}/void: an unknown field is 400 before the unknown id is looked up; without it the unknown id is 404', async () => {
      const res = await api.post('/v1/credit_notes/cn_unknown/void', { reason: 'x' });
      expect([res.status, res.body.error.details.field]).toEqual([400, 'reason']);
      expect((await api.post('/v1/credit_notes/cn_unknown/void', {})).status).toBe(404);
      expect((await api.call('POST', '/v1/credit_notes/cn_unknown/void')).status).toBe(404);
    });
  });
});

describe('3b: the bootstrap and development keys are restored at start (real Postgres and Kafka)', () => {
  let database: TestDatabase;
  let running: Embedded | undefined;
  const dataDir = path.join(os.tmpdir(), `billstream-restore-${process.pid}-${Date.now()}`);

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await running?.stop();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function start(bootstrapKey?: string) {
    const { logger, lines } = capturingLogger('restore');
    running = await startEmbedded({
      logger,
      dataDir,
      port: 0,
      host: '127.0.0.1',
      databaseUrl: database.url,
      kafkaBrokers: kafkaBrokers(),
      kafkaTopicPrefix: uniqueTopicPrefix(),
      rateLimitRps: 100_000,
      rateLimitBurst: 100_000,
      bootstrap: bootstrapKey ? { key: bootstrapKey, tenantId: TEST_TENANT, environmentId: TEST_ENVIRONMENT } : undefined,
    });
    return { embedded: running, lines };
  }
  async function stop() {
    await running?.stop();
    running = undefined;
  }

  it('a revoked (or narrowed) BOOTSTRAP_API_KEY is restored with * at the next start, and the start logs it', async () => {
    const key = randomKey();
    const { embedded } = await start(key);
    let api = new ApiClient(embedded.url, key);
    const own = (await api.get('/v1/api-keys')).body.items.find((k: { name: string }) => k.name === 'bootstrap');
    expect((await api.delete(`/v1/api-keys/${own.id}`)).status).toBe(204);
    await waitFor(async () => (await api.get('/v1/customers')).status === 401, { timeoutMs: 10_000, what: 'bootstrap key revoked' });
    await stop();

    const second = await start(key);
    api = new ApiClient(second.embedded.url, key);
    expect((await api.get('/v1/customers')).status).toBe(200);
    const restored = (await api.get('/v1/api-keys')).body.items.find((k: { id: string }) => k.id === own.id);
    expect(restored).toMatchObject({ permissions: ['*'], revoked_at: null });
    expect(second.lines).toContainEqual(
      expect.objectContaining({ level: 'warn', message: expect.stringContaining('BOOTSTRAP_API_KEY restored at start'), key_id: own.id, was_permissions: ['*'] }),
    );
    await stop();
  });

  it("npm start's development key stays usable: revoked, it is restored at the next start", async () => {
    const first = await start();
    const devKey = first.embedded.devKey!;
    expect(devKey.created).toBe(true);
    let api = new ApiClient(first.embedded.url, devKey.key);
    const own = (await api.get('/v1/api-keys')).body.items.find((k: { environment_id: string }) => k.environment_id === 'development');
    expect((await api.delete(`/v1/api-keys/${own.id}`)).status).toBe(204);
    await waitFor(async () => (await api.get('/v1/customers')).status === 401, { timeoutMs: 10_000, what: 'development key revoked' });
    await stop();

    const second = await start();
    expect(second.embedded.devKey).toMatchObject({ key: devKey.key, created: false });
    api = new ApiClient(second.embedded.url, devKey.key);
    expect((await api.get('/v1/customers')).status).toBe(200);
    expect(second.lines).toContainEqual(expect.objectContaining({ level: 'warn', message: expect.stringContaining('development key restored at start'), key_id: own.id }));
    await stop();
  });
});
