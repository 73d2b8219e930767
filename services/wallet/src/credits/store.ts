import type { Scope } from '@billstream/contracts';
import type { Trx } from '@billstream/db';
import type { StoredCredit } from './domain';

/** Class ids of the advisory locks (pg_advisory_xact_lock(int, int)): 'wcrd' (a key), 'wpre' (a customer's PRE_PAID wallet of a currency). */
const KEY_LOCK = 0x7763_7264;
const KIND_LOCK = 0x7770_7265;

interface CustomerCreditRow {
  tenant_id: string;
  environment_id: string;
  idempotency_key: string;
  customer_id: string;
  wallet_id: string;
  transaction_id: string;
  wallet_created: boolean;
  request_hash: string;
  created_at: Date;
}

/** `customer_credits`: the credits made by idempotency key, one row per key in a tenant and environment. */
export class CustomerCreditStore {
  /** Orders the requests of one key: the second waits for the first's commit and then finds its row. */
  async lockKey(trx: Trx, scope: Scope, key: string): Promise<void> {
    await trx.raw('SELECT pg_advisory_xact_lock(?, hashtext(?))', [KEY_LOCK, `${scope.tenantId}\u001f${scope.environmentId}\u001f${key}`]);
  }

  /**
   * `lockKey` for several keys in one statement: the locks are taken in the order of their
   * hashes (each once), so two batches with overlapping keys never deadlock, and a batch and a
   * single call on one key take the same lock.
   */
  async lockKeys(trx: Trx, scope: Scope, keys: string[]): Promise<void> {
    await lockAllInOrder(trx, KEY_LOCK, keys.map((key) => `${scope.tenantId}\u001f${scope.environmentId}\u001f${key}`));
  }

  /** `lockPrepaidWallet` for several (customer, currency) pairs in one statement, in hash order (after every key lock of the batch). */
  async lockPrepaidWallets(trx: Trx, scope: Scope, pairs: Array<{ customerId: string; currency: string }>): Promise<void> {
    await lockAllInOrder(trx, KIND_LOCK, pairs.map((p) => `${scope.tenantId}\u001f${scope.environmentId}\u001f${p.customerId}\u001f${p.currency}`));
  }

  /** Orders the creations of one customer's PRE_PAID wallet of a currency (different keys, same wallet). */
  async lockPrepaidWallet(trx: Trx, scope: Scope, customerId: string, currency: string): Promise<void> {
    await trx.raw('SELECT pg_advisory_xact_lock(?, hashtext(?))', [KIND_LOCK, `${scope.tenantId}\u001f${scope.environmentId}\u001f${customerId}\u001f${currency}`]);
  }

  async getByKey(trx: Trx, scope: Scope, key: string): Promise<StoredCredit | undefined> {
    const row = await trx<CustomerCreditRow>('customer_credits')
      .where({ tenant_id: scope.tenantId, environment_id: scope.environmentId, idempotency_key: key })
      .first();
    return row && { walletId: row.wallet_id, transactionId: row.transaction_id, walletCreated: row.wallet_created, requestHash: row.request_hash };
  }

  /** The stored credits of the keys that have one, by key, in one statement. */
  async getByKeys(trx: Trx, scope: Scope, keys: string[]): Promise<Map<string, StoredCredit>> {
    if (keys.length === 0) return new Map();
    const rows = await trx<CustomerCreditRow>('customer_credits')
      .where({ tenant_id: scope.tenantId, environment_id: scope.environmentId })
      .whereIn('idempotency_key', keys);
    return new Map(rows.map((r) => [r.idempotency_key, { walletId: r.wallet_id, transactionId: r.transaction_id, walletCreated: r.wallet_created, requestHash: r.request_hash }]));
  }

  /** Stores the credits of a batch, one statement. */
  async insertMany(trx: Trx, scope: Scope, credits: Array<{ key: string; customerId: string; credit: StoredCredit }>, now: Date): Promise<void> {
    if (credits.length === 0) return;
    await trx<CustomerCreditRow>('customer_credits').insert(
      credits.map(({ key, customerId, credit }) => ({
        tenant_id: scope.tenantId,
        environment_id: scope.environmentId,
        idempotency_key: key,
        customer_id: customerId,
        wallet_id: credit.walletId,
        transaction_id: credit.transactionId,
        wallet_created: credit.walletCreated,
        request_hash: credit.requestHash,
        created_at: now,
      })),
    );
  }

  /** Stores one credit (a single call's). */
  insert(trx: Trx, scope: Scope, key: string, customerId: string, credit: StoredCredit, now: Date): Promise<void> {
    return this.insertMany(trx, scope, [{ key, customerId, credit }], now);
  }
}

/** Takes the advisory locks (class, hashtext(name)) of `names` in one statement, in the order of their hashes, each once. */
async function lockAllInOrder(trx: Trx, lockClass: number, names: string[]): Promise<void> {
  if (names.length === 0) return;
  // The subquery sorts (ORDER BY keeps it from being flattened); the outer list locks row by row in that order.
  await trx.raw('SELECT pg_advisory_xact_lock(?, s.k) FROM (SELECT DISTINCT hashtext(x) AS k FROM unnest(?::text[]) AS x ORDER BY k) s', [lockClass, names]);
}
