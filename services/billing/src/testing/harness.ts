import { InProcessBus } from '@billstream/bus';
import type { Db } from '@billstream/db';
import { createTestDatabase, migratedDb, testLogger, type TestDatabase } from '@billstream/testing';
import type { Meters } from '../clients/meters/domain';
import { migrations, SCHEMA } from '../migrations';
import type { NewPrice } from '../prices/domain';
import type { Wallets } from '../clients/wallets/domain';
import { createBillingService, type BillingServiceHandle } from '../service';

export const TENANT = 'tenant-b';
export const ENVIRONMENT = 'production';
export const CTX = { tenantId: TENANT, environmentId: ENVIRONMENT, actor: 'key_test', requestId: 'req-test' };

/** A clock the test sets: periods end and notices fall due without waiting. */
export class TestClock {
  private at: number;
  constructor(start: string) {
    this.at = Date.parse(start);
  }
  readonly now = (): Date => new Date(this.at);
  set(iso: string): void {
    this.at = Date.parse(iso);
  }
}

/** Meters the test declares, with fixed usage values per meter. */
export class FakeMeters implements Meters {
  readonly known = new Map<string, string>();
  /** Calls of each method (the period job's batches read usage with usageMany). */
  readonly calls = { usage: 0, usageMany: 0 };
  async exists(_scope: unknown, meterId: string): Promise<boolean> {
    return this.known.has(meterId);
  }
  /** Each meter's aggregation type (COUNT unless set). */
  readonly aggregations = new Map<string, string>();
  async aggregation(_scope: unknown, meterId: string): Promise<string | undefined> {
    return this.known.has(meterId) ? (this.aggregations.get(meterId) ?? 'COUNT') : undefined;
  }
  async usage(_scope: unknown, meterId: string): Promise<string> {
    this.calls.usage += 1;
    return this.known.get(meterId) ?? '0';
  }
  async usageMany(_scope: unknown, queries: Array<{ meterId: string }>): Promise<string[]> {
    this.calls.usageMany += 1;
    return queries.map((q) => this.known.get(q.meterId) ?? '0');
  }
}

export const monthlyFixed: NewPrice = {
  type: 'FIXED',
  currency: 'usd',
  amount: '10',
  billingModel: 'FLAT_FEE',
  billingPeriod: 'MONTHLY',
  billingPeriodCount: 1,
  invoiceCadence: 'ADVANCE',
  meterId: null,
  filterValues: null,
  package: null,
  tierMode: null,
  tiers: null,
  displayName: null,
  taxRateIds: [],
  taxBehavior: null,
};

export interface BillingHarness {
  db: Db;
  database: TestDatabase;
  clock: TestClock;
  meters: FakeMeters;
  /** A second instance on the same database: a replica. */
  replica(): BillingServiceHandle;
  service: BillingServiceHandle;
  /** A customer billing knows (as if its customer.created event had arrived). */
  customer(id: string): Promise<string>;
  /** The subscription events written to the outbox, oldest first. */
  events(subscriptionId: string): Promise<Array<{ type: string; payload: { subscription: Record<string, unknown> } }>>;
  stop(): Promise<void>;
}

/**
 * The billing service on a fresh Postgres database with the in-process bus, a clock the test
 * sets, fake meters and no customer service (customers go into the projection directly); the
 * wallet service is unreachable unless the test gives a fake of it.
 */
export async function startBillingHarness(start: string, options: { wallets?: Wallets } = {}): Promise<BillingHarness> {
  const database = await createTestDatabase();
  const db = await migratedDb(database.url, SCHEMA, migrations, 20);
  const clock = new TestClock(start);
  const meters = new FakeMeters();
  const make = () =>
    createBillingService(
      { db, bus: new InProcessBus(), logger: testLogger('billing') },
      {
        internalToken: 'test-internal-token-0123456789',
        customerServiceUrl: 'http://127.0.0.1:9',
        ingestionServiceUrl: 'http://127.0.0.1:9',
        walletServiceUrl: 'http://127.0.0.1:9',
        settings: { intervalMs: 0, renewalNoticeDays: 3, finalizeDelayMs: 0, invoiceNumberPrefix: 'INV', unbilledSweepMs: 0 },
        clock: clock.now,
        customerLookup: { find: async () => undefined },
        meters,
        wallets: options.wallets,
      },
    );
  const service = make();
  return {
    db,
    database,
    clock,
    meters,
    service,
    replica: make,
    async customer(id) {
      await db('customers').insert({ id, tenant_id: TENANT, environment_id: ENVIRONMENT, external_id: `ext-${id}`, updated_at: new Date() });
      return id;
    },
    async events(subscriptionId) {
      const rows = await db('outbox').where({ message_key: subscriptionId }).orderBy('seq');
      return rows.map((r: { value: string }) => JSON.parse(r.value));
    },
    async stop() {
      await db.destroy();
      await database.drop();
    },
  };
}
