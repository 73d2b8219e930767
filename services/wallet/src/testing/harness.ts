import { InProcessBus } from '@billstream/bus';
import type { Db } from '@billstream/db';
import { Exact } from '@billstream/money';
import { createTestDatabase, migratedDb, testLogger, type TestDatabase } from '@billstream/testing';
import { migrations, SCHEMA } from '../migrations';
import { createWalletService, type WalletServiceHandle } from '../service';
import type { CreateWalletInput, RequestMeta } from '../wallets/service';
import type { Wallet } from '../wallets/domain';

export const TENANT = 'tenant-w';
export const ENVIRONMENT = 'production';
/** The internal token of the harness's service (its routes need it, as the gateway sends it). */
export const INTERNAL_TOKEN = 'test-internal-token-0123456789';
export const META: RequestMeta = { tenantId: TENANT, environmentId: ENVIRONMENT, actor: 'key_test', requestId: 'req-test' };

/** A clock the test moves forward (credits expire without waiting). */
export class TestClock {
  private offsetMs = 0;
  private frozenAt?: number;
  readonly now = (): Date => new Date((this.frozenAt ?? Date.now()) + this.offsetMs);
  advance(ms: number): void {
    this.offsetMs += ms;
  }
  /** Stops the clock: it moves only by `advance` from now on. */
  freeze(): void {
    this.frozenAt = Date.now();
  }
}

export interface LedgerHarness {
  db: Db;
  database: TestDatabase;
  bus: InProcessBus;
  clock: TestClock;
  service: WalletServiceHandle;
  /** A customer the wallet service knows (as if its customer.created event had arrived). */
  customer(id?: string): Promise<string>;
  wallet(overrides?: Partial<CreateWalletInput>): Promise<Wallet>;
  events(walletId: string, type?: string): Promise<Array<{ type: string; payload: WalletEventPayload }>>;
  stop(): Promise<void>;
}

/** Event payloads as published (read loosely by assertions). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type WalletEventPayload = Record<string, any>;

let counter = 0;

/**
 * The wallet service on a fresh Postgres database with the in-process bus, a movable clock
 * and no customer service: customers are put into its projection directly.
 */
export async function startLedgerHarness(): Promise<LedgerHarness> {
  const database = await createTestDatabase();
  const db = await migratedDb(database.url, SCHEMA, migrations, 30);
  const bus = new InProcessBus();
  const clock = new TestClock();
  const service = createWalletService(
    { db, bus, logger: testLogger('wallet') },
    {
      internalToken: INTERNAL_TOKEN,
      customerServiceUrl: 'http://127.0.0.1:9',
      expiryIntervalMs: 0,
      clock: clock.now,
      customerLookup: { exists: async () => false, idOfExternal: async () => undefined },
    },
  );
  await service.start();
  const harness: LedgerHarness = {
    db,
    database,
    bus,
    clock,
    service,
    async customer(id = `cust_test${(counter += 1)}_${Date.now()}`) {
      await db('customers').insert({ id, tenant_id: TENANT, environment_id: ENVIRONMENT }).onConflict('id').ignore();
      return id;
    },
    async wallet(overrides = {}) {
      const customerId = overrides.customerId ?? (await harness.customer());
      return service.wallets.create(META, {
        customerId,
        currency: 'usd',
        walletType: 'PRE_PAID',
        conversionRate: new Exact(1),
        topupConversionRate: null,
        initialCredits: null,
        initialCreditsExpiry: null,
        description: null,
        metadata: {},
        autoTopup: null,
        alertSettings: null,
        allowedPriceTypes: null,
        ...overrides,
      });
    },
    async events(walletId, type) {
      const rows = await db('outbox').where({ message_key: walletId }).orderBy('seq').select('value');
      const events = rows.map((r: { value: string }) => JSON.parse(r.value) as { type: string; payload: WalletEventPayload });
      return type ? events.filter((e) => e.type === type) : events;
    },
    async stop() {
      await service.stop();
      await db.destroy();
      await database.drop();
    },
  };
  return harness;
}
