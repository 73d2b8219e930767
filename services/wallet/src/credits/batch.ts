import type { DomainEvent } from '@billstream/contracts';
import type { Trx } from '@billstream/db';
import { IdempotencyConflictError, PG_UNIQUE_VIOLATION, pgErrorCode } from '@billstream/errors';
import type { EventContext } from '@billstream/outbox';
import { Decimal } from 'decimal.js';
import type { CustomerDirectory } from '../customers/directory';
import type { EntryStore } from '../entries/store';
import { WALLET_EVENTS } from '../events';
import { credit } from '../ledger/credit';
import type { Ledger } from '../ledger/ledger';
import type { WalletChange } from '../ledger/change';
import type { Wallet } from '../wallets/domain';
import { activeWalletsKey, type WalletStore } from '../wallets/store';
import type { CustomerCreditOutcome, CustomerCreditRequest } from './domain';
import { creditHash } from './hash';
import { prepaidWalletFor } from './prepaid-wallet';
import type { CustomerCreditStore } from './store';

/** A unique violation (a client's POST /v1/wallets made the wallet meanwhile) retries the batch: it then finds the wallet. */
const ATTEMPTS = 3;

/**
 * Many credits of one tenant and environment in ONE database transaction, each exactly as
 * `CustomerCreditService.credit` makes it (ADR 0048): the keys' locks in hash order, one read
 * of the stored keys (a stored key answers its credit; one stored with another request refuses
 * the whole batch with 409 and nothing is written), then for the others: an expiry passed is
 * that item's refusal, the customers share-locked in one statement (a gone one: refusal), the
 * (customer, currency) locks in hash order, one read of the open PRE_PAID wallets, one insert
 * of the missing ones, one lock of the existing ones, the credits in the request's order (a
 * frozen wallet: refusal), one save of every wallet, one insert of the stored keys.
 *
 * Every lock a single credit takes (key, then customer, then (customer, currency), then wallet
 * row) the batch takes in the same order, each class in one statement in a fixed order: so
 * batches and single calls with the same keys wait for each other and never deadlock.
 */
export class CustomerCreditBatch {
  constructor(
    private readonly ledger: Ledger,
    private readonly wallets: WalletStore,
    private readonly entries: EntryStore,
    private readonly credits: CustomerCreditStore,
    private readonly customers: CustomerDirectory,
  ) {}

  async creditMany(ctx: EventContext & { requestId: string }, requests: CustomerCreditRequest[]): Promise<CustomerCreditOutcome[]> {
    const hashes = requests.map(creditHash);
    // Customers not seen yet are asked of the customer service before the transaction (as a single credit does).
    await this.customers.learnMany(ctx, requests.map((r) => r.customerId), ctx.requestId);
    for (let attempt = 1; ; attempt++) {
      try {
        const { result } = await this.ledger.transaction((trx) => this.creditIn(trx, ctx, requests, hashes));
        return result;
      } catch (err) {
        if (pgErrorCode(err) !== PG_UNIQUE_VIOLATION || attempt >= ATTEMPTS) throw err;
      }
    }
  }

  private async creditIn(trx: Trx, ctx: EventContext, requests: CustomerCreditRequest[], hashes: string[]): Promise<{ result: CustomerCreditOutcome[]; events: DomainEvent[] }> {
    const keys = requests.map((r) => r.idempotencyKey);
    await this.credits.lockKeys(trx, ctx, keys);
    const outcomes: Array<CustomerCreditOutcome | undefined> = await this.storedAnswers(trx, ctx, requests, hashes);
    const now = this.ledger.clock();
    const refuse = (i: number, outcome: Omit<Extract<CustomerCreditOutcome, { status: 'refused' }>, 'status'>) => {
      outcomes[i] = { status: 'refused', ...outcome };
    };
    const open = () => requests.flatMap((_, i) => (outcomes[i] ? [] : [i]));
    for (const i of open()) {
      const expiry = requests[i].expiryDate;
      if (expiry && expiry <= now) refuse(i, { reason: 'expired', field: 'expiry_date', message: 'expiry_date must be in the future' });
    }
    if (open().length === 0) return { result: outcomes as CustomerCreditOutcome[], events: [] };

    const live = await this.customers.lockExistingMany(trx, ctx, open().map((i) => requests[i].customerId));
    for (const i of open()) {
      const id = requests[i].customerId;
      if (!live.has(id)) refuse(i, { reason: 'customer_deleted', field: 'customer_id', message: `Customer ${id} not found` });
    }
    const fresh = open();
    if (fresh.length === 0) return { result: outcomes as CustomerCreditOutcome[], events: [] };

    const pairs = fresh.map((i) => requests[i]);
    await this.credits.lockPrepaidWallets(trx, ctx, pairs);
    const existing = await this.wallets.openIdsOf(trx, ctx, 'PRE_PAID', pairs);
    const created = new Map<string, Wallet>();
    for (const i of fresh) {
      const key = activeWalletsKey(requests[i]);
      if (!existing.has(key) && !created.has(key)) created.set(key, prepaidWalletFor(ctx, requests[i], now));
    }
    const { events } = await this.ledger.changeManyIn(
      trx,
      [...new Set(existing.values())].map((walletId) => ({ ctx, walletId })),
      async (changes) => {
        const byId = new Map(changes.flatMap((c) => (c ? [[c.wallet.id, c] as const] : [])));
        for (const w of created.values()) byId.get(w.id)!.announceWallet(WALLET_EVENTS.created);
        const announced = new Set<string>();
        for (const i of fresh) {
          const key = activeWalletsKey(requests[i]);
          const change = byId.get(existing.get(key) ?? created.get(key)!.id)!;
          if (change.wallet.walletStatus !== 'active') {
            const status = change.wallet.walletStatus;
            refuse(i, { reason: 'wallet_not_active', field: 'wallet_status', message: `The wallet is ${status}; it takes no top-ups or debits` });
            continue;
          }
          const walletCreated = created.has(key) && !announced.has(key);
          announced.add(key);
          outcomes[i] = { status: 'credited', credit: { walletId: change.wallet.id, walletCreated, entry: this.creditOne(change, requests[i], hashes[i]), replayed: false } };
        }
      },
      [...created.values()].map((wallet) => ({ ctx, wallet })),
    );
    const stored = fresh.flatMap((i) => {
      const o = outcomes[i]!;
      if (o.status !== 'credited') return [];
      const { walletId, walletCreated, entry } = o.credit;
      return [{ key: keys[i], customerId: requests[i].customerId, credit: { walletId, transactionId: entry.id, walletCreated, requestHash: hashes[i] } }];
    });
    await this.credits.insertMany(trx, ctx, stored, now);
    return { result: outcomes as CustomerCreditOutcome[], events };
  }

  /** The answers of the keys stored already (undefined for the others); a key stored with another request refuses the batch. */
  private async storedAnswers(trx: Trx, ctx: EventContext, requests: CustomerCreditRequest[], hashes: string[]): Promise<Array<CustomerCreditOutcome | undefined>> {
    const stored = await this.credits.getByKeys(trx, ctx, requests.map((r) => r.idempotencyKey));
    if (stored.size === 0) return requests.map(() => undefined);
    const entries = await this.entries.byIds(trx, ctx, [...stored.values()].map((s) => s.transactionId));
    return requests.map((r, i) => {
      const s = stored.get(r.idempotencyKey);
      if (!s) return undefined;
      if (s.requestHash !== hashes[i]) {
        throw new IdempotencyConflictError('This idempotency_key was already used with another credit', { field: `credits.${i}.idempotency_key`, transaction_id: s.transactionId });
      }
      const entry = entries.get(s.transactionId);
      if (!entry) throw new Error(`customer credit ${r.idempotencyKey}: transaction ${s.transactionId} is missing`);
      return { status: 'credited', credit: { walletId: s.walletId, walletCreated: s.walletCreated, entry, replayed: true } };
    });
  }

  /** The COMPLETED credit of one request; money becomes credits at the taking wallet's rate, rounded up to 12 decimals (docs/api/wallets.md#money-billing-gives-back-as-credits). */
  private creditOne(change: WalletChange, request: CustomerCreditRequest, hash: string) {
    const credits = request.credits ?? request.amount!.div(change.wallet.conversionRate).toDecimalPlaces(12, Decimal.ROUND_UP);
    return credit(change, {
      credits,
      reason: request.reason,
      pending: false,
      expiryDate: request.expiryDate,
      priority: request.priority,
      description: request.description,
      idempotencyKey: request.idempotencyKey,
      requestHash: hash,
    });
  }
}
