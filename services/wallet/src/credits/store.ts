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

  async insert(trx: Trx, scope: Scope, key: string, customerId: string, credit: StoredCredit, now: Date): Promise<void> {
    await trx<CustomerCreditRow>('customer_credits').insert({
      tenant_id: scope.tenantId,
      environment_id: scope.environmentId,
      idempotency_key: key,
      customer_id: customerId,
      wallet_id: credit.walletId,
      transaction_id: credit.transactionId,
      wallet_created: credit.walletCreated,
      request_hash: credit.requestHash,
      created_at: now,
    });
  }
}
