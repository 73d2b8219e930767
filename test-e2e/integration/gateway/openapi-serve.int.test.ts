import { startIntegrationStack, TEST_ENVIRONMENT, TEST_TENANT, type IntegrationStack } from '../../support/stack';
import { buildOpenApiDocument } from '@billstream/gateway';

describe('GET /v1/openapi.json on the gateway (real Postgres)', () => {
  let stack: IntegrationStack;

  beforeAll(async () => {
    stack = await startIntegrationStack({ inProcessBus: true });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('serves the generated document without a key', async () => {
    const res = await stack.api.withKey(undefined).get('/v1/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual(JSON.parse(JSON.stringify(buildOpenApiDocument())));
  });

  it('documents only operations the gateway mounts, each behind the permission it names', async () => {
    const key = await stack.keyFor(TEST_TENANT, TEST_ENVIRONMENT, ['api_keys:read']);
    const api = stack.api.withKey(key);
    const doc = buildOpenApiDocument();
    let checked = 0;
    let portal = 0;
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        if (!path.startsWith('/v1/') || op['x-billstream-permission'] === 'api_keys:read' || op.security === undefined) continue;
        if ((op.security as unknown[]).length === 0) continue;
        const concrete = path.replace(/\{([^}]+)\}/g, 'sample_$1');
        const res = await api.call(method.toUpperCase(), concrete, method === 'get' || method === 'delete' ? undefined : {});
        if ((op.security as Array<Record<string, unknown>>).some((s) => 'portalToken' in s)) {
          // The portal API takes a portal session's token, never an API key: a key is not a credential there.
          expect({ op: op.operationId, status: res.status, message: typeof res.body?.error?.message }).toEqual({ op: op.operationId, status: 401, message: 'string' });
          portal++;
          continue;
        }
        expect({ op: op.operationId, status: res.status, permission: res.body?.error?.details?.permission }).toEqual({
          op: op.operationId,
          status: 403,
          permission: op['x-billstream-permission'],
        });
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(0);
    expect(portal).toBeGreaterThan(0);
  });
});
