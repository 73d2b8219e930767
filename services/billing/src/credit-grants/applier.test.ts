import type { Scope } from '@billstream/contracts';
import type { Db } from '@billstream/db';
import { createLogger } from '@billstream/logger';
import { exact } from '@billstream/money';
import type { CustomerCreditBatchOutcome, CustomerCreditRequest, WalletCredits } from '../clients/wallets/domain';
import type { ApplicationMark, ApplicationStore } from './applications-store';
import { GrantApplier } from './applier';
import type { Application } from './domain';

/** The applier's batching (ADR 0048) on fakes: chunks of at most 100 of one scope, one mark per chunk, failures left pending. */

const NOW = new Date('2026-11-28T00:00:00Z');

function application(n: number, tenantId = 'tenant-a', status: Application['status'] = 'pending'): Application {
  return {
    id: `cgapp_${String(n).padStart(4, '0')}`,
    tenantId,
    environmentId: 'production',
    grantId: 'cgrant_1',
    subscriptionId: `sub_${n}`,
    customerId: `cus_${n}`,
    currency: 'usd',
    periodStart: NOW,
    periodEnd: new Date(NOW.getTime() + 86_400_000),
    credits: exact('10'),
    expiryDate: null,
    priority: null,
    conversionRate: exact('1'),
    description: `grant ${n}`,
    idempotencyKey: `cgrant:cgrant_1:sub_${n}:${NOW.toISOString()}`,
    status,
    skipReason: null,
    walletId: null,
    walletTransactionId: null,
    attempts: 1,
    nextAttemptAt: NOW,
    appliedAt: null,
    createdAt: NOW,
    updatedAt: NOW,
  };
}

class FakeWallet implements WalletCredits {
  readonly calls: Array<{ scope: Scope; keys: string[] }> = [];
  /** The outcome of a request, by its key; credited when not set. */
  outcome = (r: CustomerCreditRequest): CustomerCreditBatchOutcome => ({ kind: 'credited', walletId: `wal_${r.customer_id}`, walletCreated: false, transactionId: `tx_${r.idempotency_key}` });
  failCall?: number;

  async credit(): Promise<never> {
    throw new Error('the applier credits in batches');
  }

  async creditMany(scope: Scope, requests: CustomerCreditRequest[]): Promise<CustomerCreditBatchOutcome[]> {
    this.calls.push({ scope, keys: requests.map((r) => r.idempotency_key) });
    if (this.failCall === this.calls.length) throw new Error('wallet down');
    return requests.map((r) => this.outcome(r));
  }
}

class FakeApplications {
  readonly marks: ApplicationMark[][] = [];
  async markMany(_conn: unknown, marks: ApplicationMark[]): Promise<void> {
    this.marks.push(marks);
  }
}

function applierWith(wallet: FakeWallet, store: FakeApplications): GrantApplier {
  return new GrantApplier({ db: {} as Db, applications: store as unknown as ApplicationStore, wallets: wallet, logger: createLogger({ service: 'test', level: 'silent' }), clock: () => NOW });
}

describe('GrantApplier: pending applications credited in chunks', () => {
  it('sends at most 100 of one tenant and environment per wallet call and marks each chunk in one write', async () => {
    const wallet = new FakeWallet();
    const store = new FakeApplications();
    const apps = [...Array.from({ length: 230 }, (_, i) => application(i)), ...Array.from({ length: 30 }, (_, i) => application(1000 + i, 'tenant-b')), application(2000, 'tenant-a', 'applied')];
    const out = await applierWith(wallet, store).applyAll(apps, 'req');
    expect(wallet.calls.map((c) => [c.scope.tenantId, c.keys.length])).toEqual([
      ['tenant-a', 100],
      ['tenant-a', 100],
      ['tenant-a', 30],
      ['tenant-b', 30],
    ]);
    expect(store.marks.map((m) => m.length)).toEqual([100, 100, 30, 30]);
    expect(out).toEqual([...Array.from({ length: 260 }, () => 'applied'), 'applied']);
    expect(store.marks[0][0]).toEqual({ id: apps[0].id, status: 'applied', walletId: 'wal_cus_0', transactionId: `tx_${apps[0].idempotencyKey}` });
    expect(wallet.calls.flatMap((c) => c.keys)).not.toContain(apps[260].idempotencyKey);
  });

  it('leaves a failed call\'s chunk pending and unmarked, and goes on with the next chunk', async () => {
    const wallet = new FakeWallet();
    wallet.failCall = 1;
    const store = new FakeApplications();
    const apps = Array.from({ length: 150 }, (_, i) => application(i));
    const out = await applierWith(wallet, store).applyAll(apps, 'req');
    expect(out.slice(0, 100)).toEqual(Array.from({ length: 100 }, () => 'pending'));
    expect(out.slice(100)).toEqual(Array.from({ length: 50 }, () => 'applied'));
    expect(store.marks.map((m) => m.map((x) => x.id))).toEqual([apps.slice(100).map((a) => a.id)]);
  });

  it('skips the final refusals, keeps a frozen wallet\'s application pending', async () => {
    const wallet = new FakeWallet();
    const store = new FakeApplications();
    const apps = [application(1), application(2), application(3), application(4)];
    const outcomes: Record<string, CustomerCreditBatchOutcome> = {
      [apps[1].idempotencyKey]: { kind: 'refused', reason: 'expired', message: 'expiry_date must be in the future' },
      [apps[2].idempotencyKey]: { kind: 'refused', reason: 'customer_deleted', message: 'Customer cus_3 not found' },
      [apps[3].idempotencyKey]: { kind: 'retry', message: 'The wallet is frozen' },
    };
    const credited = wallet.outcome;
    wallet.outcome = (r) => outcomes[r.idempotency_key] ?? credited(r);
    const out = await applierWith(wallet, store).applyAll(apps, 'req');
    expect(out).toEqual(['applied', 'skipped', 'skipped', 'pending']);
    expect(store.marks).toEqual([
      [
        { id: apps[0].id, status: 'applied', walletId: 'wal_cus_1', transactionId: `tx_${apps[0].idempotencyKey}` },
        { id: apps[1].id, status: 'skipped', reason: 'expired' },
        { id: apps[2].id, status: 'skipped', reason: 'customer_deleted' },
      ],
    ]);
  });
});
