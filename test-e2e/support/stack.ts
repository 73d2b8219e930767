import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { startEmbedded, type Embedded, type EmbeddedOptions } from '@billstream/standalone';
import {
  ApiClient,
  createTestDatabase,
  freePort,
  kafkaBrokers,
  randomKey,
  testLogger,
  uniqueTopicPrefix,
  waitFor,
  type TestDatabase,
} from '@billstream/testing';

export const TEST_TENANT = 'tenant-a';
export const TEST_ENVIRONMENT = 'production';

export interface IntegrationStack {
  api: ApiClient;
  embedded: Embedded;
  database: TestDatabase;
  topicPrefix: string;
  /** A key for another tenant/environment with the given permissions. */
  keyFor(tenantId: string, environmentId: string, permissions?: string[]): Promise<string>;
  stop(): Promise<void>;
}

export interface IntegrationStackOptions {
  /** Use the in-process bus instead of the real Kafka broker. */
  inProcessBus?: boolean;
  rateLimitRps?: number;
  rateLimitBurst?: number;
  extra?: Partial<EmbeddedOptions>;
}

/**
 * All seven services in this test process, on a database of their own on the local
 * Postgres and on the real Kafka broker (topics prefixed for this test), behind a gateway
 * on a free port, with a `*` key for TEST_TENANT/TEST_ENVIRONMENT.
 */
export async function startIntegrationStack(options: IntegrationStackOptions = {}): Promise<IntegrationStack> {
  const database = await createTestDatabase({ migrated: true });
  const topicPrefix = uniqueTopicPrefix();
  const key = randomKey();
  const embedded = await startEmbedded({
    logger: testLogger('stack'),
    dataDir: path.join(os.tmpdir(), `billstream-test-${database.name}`),
    port: 0,
    host: '127.0.0.1',
    databaseUrl: database.url,
    kafkaBrokers: options.inProcessBus ? undefined : kafkaBrokers(),
    kafkaTopicPrefix: topicPrefix,
    rateLimitRps: options.rateLimitRps ?? 100_000,
    rateLimitBurst: options.rateLimitBurst ?? 100_000,
    bootstrap: { key, tenantId: TEST_TENANT, environmentId: TEST_ENVIRONMENT },
    ...options.extra,
  });
  return {
    api: new ApiClient(embedded.url, key),
    embedded,
    database,
    topicPrefix,
    async keyFor(tenantId, environmentId, permissions = ['*']) {
      const { key: k } = await embedded.gateway.apiKeys.create({
        tenantId,
        environmentId,
        name: 'test',
        permissions,
        createdBy: 'test',
      });
      return k;
    },
    async stop() {
      await embedded.stop();
      await database.drop();
    },
  };
}

export type ServiceProcessName = 'gateway' | 'customer' | 'wallet' | 'ingestion-aggregator' | 'webhook-dispatcher' | 'billing' | 'entitlements';
// The entitlements service after billing: its first start seeds its projection from billing (ADR 0061).
const SERVICES: ServiceProcessName[] = ['customer', 'wallet', 'ingestion-aggregator', 'webhook-dispatcher', 'billing', 'entitlements', 'gateway'];

export interface ProcessStack {
  api: ApiClient;
  database: TestDatabase;
  topicPrefix: string;
  urls: Record<ServiceProcessName, string>;
  /** Each service's metrics listener (GET /metrics on its METRICS_PORT, ADR 0020). */
  metricsUrls: Record<ServiceProcessName, string>;
  /** The services' internal token (for tests calling an internal route of a service directly). */
  internalToken: string;
  /** SIGKILL one service (no clean shutdown). */
  kill(name: ServiceProcessName): Promise<void>;
  /**
   * Starts a killed or stopped service again and waits until it is ready: when it was spawned, and ms from then to ready.
   * `env` is added to the service's variables for this start only (a later restart without it drops it).
   */
  restart(name: ServiceProcessName, env?: Record<string, string>): Promise<{ spawnedAt: number; readyMs: number }>;
  /** A second process of a service (same database, topics and groups) on a port of its own, with `env` added. */
  startReplica(name: ServiceProcessName, env?: Record<string, string>): Promise<Replica>;
  /** Whether the service's current process is alive (false once it was killed or killed itself). */
  running(name: ServiceProcessName): boolean;
  logs(name: ServiceProcessName): string;
  stop(): Promise<void>;
}

export interface Replica {
  url: string;
  /** SIGKILL (no clean shutdown). */
  kill(): Promise<void>;
  logs(): string;
}

export interface ProcessStackOptions {
  env?: Partial<Record<ServiceProcessName, Record<string, string>>>;
  commonEnv?: Record<string, string>;
}

const ROOT = path.resolve(__dirname, '../..');

/**
 * The seven services as separate processes (from their build output), on real Postgres
 * and Kafka, the way a platform team deploys them. Run `npm run build` first.
 */
export async function startProcessStack(options: ProcessStackOptions = {}): Promise<ProcessStack> {
  const database = await createTestDatabase({ migrated: true });
  const topicPrefix = uniqueTopicPrefix('e2e');
  const key = randomKey();
  const internalToken = randomBytes(24).toString('hex');
  const ports = Object.fromEntries(await Promise.all(SERVICES.map(async (s) => [s, await freePort()]))) as Record<
    ServiceProcessName,
    number
  >;
  const metricsPorts = Object.fromEntries(await Promise.all(SERVICES.map(async (s) => [s, await freePort()]))) as Record<
    ServiceProcessName,
    number
  >;
  const metricsUrls = Object.fromEntries(SERVICES.map((s) => [s, `http://127.0.0.1:${metricsPorts[s]}/metrics`])) as Record<
    ServiceProcessName,
    string
  >;
  const urls = Object.fromEntries(SERVICES.map((s) => [s, `http://127.0.0.1:${ports[s]}`])) as Record<
    ServiceProcessName,
    string
  >;
  const common: Record<string, string> = {
    DATABASE_URL: database.url,
    KAFKA_BROKERS: kafkaBrokers().join(','),
    KAFKA_TOPIC_PREFIX: topicPrefix,
    INTERNAL_TOKEN: internalToken,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'warn',
    EXIT_WITH_PARENT: 'true',
    HOST: '127.0.0.1',
    ...options.commonEnv,
  };
  const perService: Record<ServiceProcessName, Record<string, string>> = {
    customer: { BILLING_SERVICE_URL: urls.billing },
    wallet: { CUSTOMER_SERVICE_URL: urls.customer, ENTITLEMENTS_SERVICE_URL: urls.entitlements, INGESTION_SERVICE_URL: urls['ingestion-aggregator'] },
    'ingestion-aggregator': {},
    'webhook-dispatcher': {},
    billing: { CUSTOMER_SERVICE_URL: urls.customer, INGESTION_SERVICE_URL: urls['ingestion-aggregator'], WALLET_SERVICE_URL: urls.wallet },
    entitlements: { CUSTOMER_SERVICE_URL: urls.customer, INGESTION_SERVICE_URL: urls['ingestion-aggregator'], BILLING_SERVICE_URL: urls.billing, WALLET_SERVICE_URL: urls.wallet },
    gateway: {
      CUSTOMER_SERVICE_URL: urls.customer,
      WALLET_SERVICE_URL: urls.wallet,
      INGESTION_SERVICE_URL: urls['ingestion-aggregator'],
      WEBHOOK_SERVICE_URL: urls['webhook-dispatcher'],
      BILLING_SERVICE_URL: urls.billing,
      ENTITLEMENTS_SERVICE_URL: urls.entitlements,
      BOOTSTRAP_API_KEY: key,
      BOOTSTRAP_TENANT_ID: TEST_TENANT,
      BOOTSTRAP_ENVIRONMENT_ID: TEST_ENVIRONMENT,
    },
  };
  const procs = new Map<ServiceProcessName, ChildProcess>();
  const output = new Map<ServiceProcessName, string>();
  const replicas: ChildProcess[] = [];

  /** Spawns a service on a port; `ready` resolves once its /readyz answers 200. */
  const spawnService = (name: ServiceProcessName, port: number, metricsPort: number, log: (text: string) => void, env: Record<string, string> = {}) => {
    const spawnedAt = Date.now();
    const child = spawn(process.execPath, [path.join(ROOT, 'services', name, 'dist', 'main.js')], {
      env: { ...process.env, ...common, ...perService[name], ...options.env?.[name], ...env, PORT: String(port), METRICS_PORT: String(metricsPort) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let text = '';
    const append = (chunk: Buffer) => {
      text = (text + chunk.toString()).slice(-20_000);
      log(text);
    };
    child.stdout?.on('data', append);
    child.stderr?.on('data', append);
    const ready = waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`${name} exited: ${text}`);
        const res = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined);
        return res?.status === 200;
      },
      { timeoutMs: 60_000, intervalMs: 50, what: `${name} to be ready` },
    )
      .then(() => ({ spawnedAt, readyMs: Date.now() - spawnedAt }))
      .catch((err) => {
        throw new Error(`${String(err)}\n--- ${name} output ---\n${text}`);
      });
    return { child, ready };
  };

  const launch = async (name: ServiceProcessName, env?: Record<string, string>) => {
    output.set(name, '');
    const { child, ready } = spawnService(name, ports[name], metricsPorts[name], (text) => output.set(name, text), env);
    procs.set(name, child);
    return ready;
  };
  const killChild = async (child: ChildProcess, signal: NodeJS.Signals = 'SIGKILL') => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    child.kill(signal);
    await exited;
  };
  const stopOne = async (name: ServiceProcessName, signal: NodeJS.Signals) => {
    const child = procs.get(name);
    if (child) await killChild(child, signal);
  };

  try {
    for (const name of SERVICES) await launch(name);
  } catch (err) {
    for (const name of SERVICES) await stopOne(name, 'SIGKILL');
    await database.drop();
    throw err;
  }

  return {
    api: new ApiClient(urls.gateway, key),
    database,
    topicPrefix,
    urls,
    metricsUrls,
    internalToken,
    kill: (name) => stopOne(name, 'SIGKILL'),
    restart: async (name, env) => {
      await stopOne(name, 'SIGTERM');
      return launch(name, env);
    },
    running: (name) => {
      const child = procs.get(name);
      return child !== undefined && child.exitCode === null && child.signalCode === null;
    },
    async startReplica(name, env) {
      const port = await freePort();
      let text = '';
      const { child, ready } = spawnService(name, port, 0, (t) => (text = t), env);
      replicas.push(child);
      await ready.catch(async (err) => {
        await killChild(child);
        throw err;
      });
      return { url: `http://127.0.0.1:${port}`, kill: () => killChild(child), logs: () => text };
    },
    logs: (name) => output.get(name) ?? '',
    async stop() {
      for (const child of replicas) await killChild(child, 'SIGTERM');
      for (const name of [...SERVICES].reverse()) await stopOne(name, 'SIGTERM');
      await database.drop();
    },
  };
}
