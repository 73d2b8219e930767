import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { InProcessBus, KafkaBus, type Bus, type KafkaTiming } from '@billstream/bus';
import { migrate, openServiceDatabases, type Db } from '@billstream/db';
import { billingSettingsFrom, createBillingService } from '@billstream/billing';
import { createCustomerService } from '@billstream/customer';
import { createEntitlementsService, entitlementsSettingsFrom } from '@billstream/entitlements';
import { createGateway, gatewaySettingsFrom, logEnsuredKey, type Gateway, type GatewayConfig } from '@billstream/gateway';
import { listen, routeTableOf, type Listening } from '@billstream/http';
import { createIngestionService, ingestionSettingsFrom } from '@billstream/ingestion-aggregator';
import type { Logger } from '@billstream/logger';
import type { Service } from '@billstream/runtime';
import { createWalletService, walletSettingsFrom } from '@billstream/wallet';
import { createWebhookService, webhookSettingsFromEnv } from '@billstream/webhook-dispatcher';

export interface EmbeddedOptions {
  logger: Logger;
  dataDir: string;
  port: number;
  host: string;
  /** Real Postgres instead of embedded PGlite (one database, a schema per service). */
  databaseUrl?: string;
  /** Connections per service on real Postgres (default 5). */
  databasePoolMax?: number;
  /** Repeated statements as named statements on real Postgres (default true, ADR 0052). */
  databaseNamedStatements?: boolean;
  /** Real Kafka instead of the in-process bus. */
  kafkaBrokers?: string[];
  kafkaTopicPrefix?: string;
  /** Partitions of the topics the bus creates (KAFKA_PARTITIONS; default 4). */
  kafkaPartitions?: number;
  /** Consumer group and reconnection timing (defaults: KAFKA_TIMING_DEFAULTS of @billstream/bus). */
  kafkaTiming?: Partial<KafkaTiming>;
  /** The gateway's per-tenant rate limit; default RATE_LIMIT_RPS and RATE_LIMIT_BURST of the environment. */
  rateLimitRps?: number;
  rateLimitBurst?: number;
  /** A key with `*` to ensure; default BOOTSTRAP_API_KEY of the environment; without either, a development key. */
  bootstrap?: { key: string; tenantId: string; environmentId: string };
  /**
   * Settings of the services, over process.env: each service reads its variables with its own
   * mapping, as when it runs alone (docs/operations.md).
   */
  env?: NodeJS.ProcessEnv;
  /**
   * The gateway runs the services' routes directly (default true): one HTTP request per call
   * instead of two. false forwards over loopback HTTP, as separate deployments do.
   */
  inProcessCalls?: boolean;
}

export interface Embedded {
  url: string;
  port: number;
  gateway: Gateway;
  /**
   * Where each service listens on loopback, and the internal token that its edge accepts
   * with a tenant (for tests that call a service directly, as a separate gateway would).
   */
  services: { urls: GatewayConfig['serviceUrls']; internalToken: string };
  /** The development key, when this start made or reused one. */
  devKey?: { key: string; created: boolean; file: string };
  /** Where the data is: "PostgreSQL (DATABASE_URL)" or the embedded database's directory. */
  database: string;
  stop(): Promise<void>;
}

/**
 * The embedded default: the seven services in one process, each on a schema of its own
 * in one database (embedded PGlite in dataDir, or DATABASE_URL) and one bus.
 */
export async function startEmbedded(options: EmbeddedOptions): Promise<Embedded> {
  const { logger, dataDir } = options;
  mkdirSync(dataDir, { recursive: true });
  // 48 hex characters, new at every start: above the 32 a service process requires (ADR 0034).
  const internalToken = randomBytes(24).toString('hex');
  // Every service's settings are parsed before anything opens: a bad variable stops the start at once.
  const env: NodeJS.ProcessEnv = { ...process.env, ...options.env };
  // Invoice documents' signed links point at this gateway unless PUBLIC_BASE_URL says otherwise (ADR 0045).
  if (!env.PUBLIC_BASE_URL && options.port > 0) env.PUBLIC_BASE_URL = `http://${['0.0.0.0', '::', ''].includes(options.host) ? '127.0.0.1' : options.host}:${options.port}`;
  // The signed links' key (ADR 0059): DOCUMENT_LINK_SECRET, or a random one kept in DATA_DIR (the
  // internal token is new at every start), never in the database next to the documents it protects.
  if (!env.DOCUMENT_LINK_SECRET) env.DOCUMENT_LINK_SECRET = documentLinkSecretOf(dataDir);
  const gatewaySettings = gatewaySettingsFrom(env);
  const settings = { ingestion: ingestionSettingsFrom(env), webhook: webhookSettingsFromEnv(env), wallet: walletSettingsFrom(env), billing: billingSettingsFrom(env), entitlements: entitlementsSettingsFrom(env) };
  // One database: schemas of DATABASE_URL, or of the embedded PGlite database in dataDir.
  const databases = await openServiceDatabases({
    databaseUrl: options.databaseUrl,
    dataDir,
    poolMax: options.databasePoolMax ?? 5,
    namedStatements: options.databaseNamedStatements,
  });
  const dbFor = (schema: string): Db => databases.forSchema(schema);
  const bus: Bus = options.kafkaBrokers
    ? new KafkaBus({
        brokers: options.kafkaBrokers,
        clientId: 'billstream-embedded',
        logger,
        topicPrefix: options.kafkaTopicPrefix,
        partitions: options.kafkaPartitions,
        timing: options.kafkaTiming,
      })
    : new InProcessBus();
  await bus.start();

  const deps = (schema: string, service: string) => ({ db: dbFor(schema), bus, logger: logger.child({ service }) });
  // Addresses are known once every app listens; services that call others resolve them lazily.
  const urls: Record<string, string> = {};
  const serviceUrl = (name: string) => () => urls[name];
  // Consumers start before producers, so the in-process bus loses nothing at start.
  const services: Service[] = [
    createWebhookService(deps('webhook', 'webhook-dispatcher'), { internalToken, ...settings.webhook }),
    // Before billing and customer: it consumes their events (ADR 0061); its seed asks billing's loopback address.
    createEntitlementsService(deps('entitlements', 'entitlements'), {
      internalToken,
      customerServiceUrl: serviceUrl('customer'),
      ingestionServiceUrl: serviceUrl('ingestion-aggregator'),
      billingServiceUrl: serviceUrl('billing'),
      walletServiceUrl: serviceUrl('wallet'),
      settings: settings.entitlements,
    }),
    createBillingService(deps('billing', 'billing'), {
      internalToken,
      customerServiceUrl: serviceUrl('customer'),
      ingestionServiceUrl: serviceUrl('ingestion-aggregator'),
      walletServiceUrl: serviceUrl('wallet'),
      settings: settings.billing,
    }),
    createIngestionService(deps('ingestion', 'ingestion-aggregator'), { internalToken, ...settings.ingestion }),
    createWalletService(deps('wallet', 'wallet'), {
      internalToken,
      customerServiceUrl: serviceUrl('customer'),
      entitlementsServiceUrl: serviceUrl('entitlements'),
      ingestionServiceUrl: serviceUrl('ingestion-aggregator'),
      ...settings.wallet,
    }),
    createCustomerService(deps('customer', 'customer'), { internalToken, billingServiceUrl: serviceUrl('billing') }),
  ];
  const listening: Listening[] = [];
  for (const service of services) {
    const http = await listen(service.app, 0, '127.0.0.1');
    listening.push(http);
    urls[service.name] = http.url;
  }
  // Migrations run in parallel; services then start one by one, consumers before producers.
  await Promise.all(services.map((s) => migrate(dbFor(s.schema), s.schema, s.migrations)));
  for (const service of services) await service.start();

  const appOf = (name: string) => services.find((s) => s.name === name)!.app;
  const serviceUrls: GatewayConfig['serviceUrls'] = {
    customer: urls['customer'],
    wallet: urls['wallet'],
    'ingestion-aggregator': urls['ingestion-aggregator'],
    'webhook-dispatcher': urls['webhook-dispatcher'],
    billing: urls['billing'],
    entitlements: urls['entitlements'],
  };
  const bootstrap = options.bootstrap ?? gatewaySettings.bootstrap;
  const gateway = createGateway(deps('gateway', 'gateway'), {
    ...gatewaySettings,
    internalToken,
    serviceUrls,
    serviceRoutes:
      options.inProcessCalls === false
        ? undefined
        : {
            customer: routeTableOf(appOf('customer')),
            wallet: routeTableOf(appOf('wallet')),
            'ingestion-aggregator': routeTableOf(appOf('ingestion-aggregator')),
            'webhook-dispatcher': routeTableOf(appOf('webhook-dispatcher')),
            billing: routeTableOf(appOf('billing')),
            entitlements: routeTableOf(appOf('entitlements')),
          },
    rateLimitRps: options.rateLimitRps ?? gatewaySettings.rateLimitRps,
    rateLimitBurst: options.rateLimitBurst ?? gatewaySettings.rateLimitBurst,
    bootstrap,
  });
  await gateway.start();

  let devKey: Embedded['devKey'];
  if (!bootstrap) {
    const file = path.join(dataDir, 'dev-api-key');
    const created = !existsSync(file);
    const key = created ? `bsk_dev_${randomBytes(24).toString('base64url')}` : readFileSync(file, 'utf8').trim();
    logEnsuredKey(logger, 'the development key', await gateway.apiKeys.ensure(key, 'default', 'development'));
    if (created) writeFileSync(file, `${key}\n`, { mode: 0o600 });
    devKey = { key, created, file };
  }

  const http = await listen(gateway.app, options.port, options.host);
  return {
    url: http.url,
    port: http.port,
    gateway,
    services: { urls: serviceUrls, internalToken },
    devKey,
    database: databases.description,
    async stop() {
      await http.close();
      await gateway.stop();
      for (const l of listening) await l.close();
      for (const s of [...services].reverse()) await s.stop();
      await bus.stop();
      await databases.close();
    },
  };
}

/** DATA_DIR/document-link-secret (0600), made at the first start without DOCUMENT_LINK_SECRET: 64 hex characters. */
export function documentLinkSecretOf(dataDir: string): string {
  const file = path.join(dataDir, 'document-link-secret');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  const secret = randomBytes(32).toString('hex');
  writeFileSync(file, `${secret}\n`, { mode: 0o600, flag: 'wx' });
  return secret;
}
