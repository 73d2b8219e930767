import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createBillingService } from '@billstream/billing';
import { InProcessBus } from '@billstream/bus';
import { ALL_ROUTES, SERVICE_NAMES } from '@billstream/contracts';
import { createCustomerService } from '@billstream/customer';
import { createEntitlementsService } from '@billstream/entitlements';
import { createDb } from '@billstream/db';
import { createGateway } from '@billstream/gateway';
import { routeTableOf } from '@billstream/http';
import { createIngestionService } from '@billstream/ingestion-aggregator';
import { createLogger } from '@billstream/logger';
import type { Service } from '@billstream/runtime';
import { createWalletService } from '@billstream/wallet';
import { createWebhookService, webhookSettingsFromEnv } from '@billstream/webhook-dispatcher';
import { documentLinkSecretOf } from './embedded';

const SERVICES_DIR = path.resolve(__dirname, '../..');

describe('the seven services', () => {
  it('are named as their packages: ServiceName is services/<name>, package @billstream/<name>', () => {
    // A deployable service has a main; the standalone app runs them all.
    const dirs = readdirSync(SERVICES_DIR).filter(
      (dir) => dir !== 'standalone' && existsSync(path.join(SERVICES_DIR, dir, 'src', 'main.ts')),
    );
    expect(dirs.sort()).toEqual([...SERVICE_NAMES].sort());
    for (const dir of dirs) {
      const pkg = JSON.parse(readFileSync(path.join(SERVICES_DIR, dir, 'package.json'), 'utf8')) as { name: string };
      expect(pkg.name).toBe(`@billstream/${dir}`);
    }
  });


  // Building a service opens no connection: the pool connects on the first query.
  const db = createDb({ databaseUrl: 'postgres://nobody@127.0.0.1:1/none', schema: 'unused' });
  const bus = new InProcessBus();
  const deps = { db, bus, logger: createLogger({ service: 'test', level: 'silent' }) };
  afterAll(() => db.destroy());

  it('each mounts every route the registry gives it, and is named as its package', () => {
    const services: Service[] = [
      createCustomerService(deps, { internalToken: 't' }),
      createWalletService(deps, { internalToken: 't', customerServiceUrl: 'http://127.0.0.1:1', env: {} }),
      createIngestionService(deps, { internalToken: 't' }),
      createWebhookService(deps, { internalToken: 't', ...webhookSettingsFromEnv({}) }),
      createBillingService(deps, { internalToken: 't', customerServiceUrl: 'http://127.0.0.1:1', ingestionServiceUrl: 'http://127.0.0.1:1', walletServiceUrl: 'http://127.0.0.1:1' }),
      createEntitlementsService(deps, { internalToken: 't', customerServiceUrl: 'http://127.0.0.1:1', ingestionServiceUrl: 'http://127.0.0.1:1' }),
      createGateway(deps, { internalToken: 't', serviceUrls: {}, rateLimitRps: 1, rateLimitBurst: 1 }),
    ];
    expect(services.map((s) => s.name).sort()).toEqual([...SERVICE_NAMES].sort());
    for (const service of services) {
      const owned = ALL_ROUTES.filter((def) => def.service === service.name).map((def) => def.operationId);
      expect(owned.length).toBeGreaterThan(0);
      expect([...routeTableOf(service.app).keys()]).toEqual(expect.arrayContaining(owned));
    }
  });
});

describe('the signed links key of npm start (ADR 0059)', () => {
  it('is made once in DATA_DIR/document-link-secret (0600) and read back at every later start', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'billstream-link-key-'));
    try {
      const first = documentLinkSecretOf(dir);
      expect(first).toMatch(/^[0-9a-f]{64}$/);
      expect(statSync(path.join(dir, 'document-link-secret')).mode & 0o777).toBe(0o600);
      expect(documentLinkSecretOf(dir)).toBe(first);
      expect(documentLinkSecretOf(mkdtempSync(path.join(dir, 'other-')))).not.toBe(first);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
