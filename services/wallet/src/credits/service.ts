import type { Trx } from '@billstream/db';
import { IdempotencyConflictError, PG_UNIQUE_VIOLATION, ValidationError, pgErrorCode } from '@billstream/errors';
import { Decimal } from 'decimal.js';
import type { EventContext } from '@billstream/outbox';
import type { CustomerDirectory } from '../customers/directory';
import type { EntryStore } from '../entries/store';
import { WALLET_EVENTS } from '../events';
import { credit } from '../ledger/credit';
import type { Ledger } from '../ledger/ledger';
import { prepaidWalletFor } from './prepaid-wallet';
import type { WalletStore } from '../wallets/store';
import type { CustomerCredit, CustomerCreditRequest } from './domain';
import { creditHash } from './hash';
import type { CustomerCreditStore } from './store';

/** Two creations of one wallet can still meet a client's POST /v1/wallets: the loser tries again and finds the wallet. */
const ATTEMPTS = 3;

/**
 * Credits a customer's PRE_PAID wallet of a currency for another service (billing's credit
 * grants; ADR 0039), exactly once per idempotency key in a tenant and environment: in one
 * database transaction, under the key's lock, a stored key answers its credit (409 when the
 * request differs), else the customer's open PRE_PAID wallet of the currency (created, once
 * under concurrency, when missing) takes a COMPLETED credit and the key is stored with it.
 */
export class CustomerCreditService {
  constructor(
    private readonly ledger: Ledger,
    private readonly wallets: WalletStore,
    private readonly entries: EntryStore,
    private readonly credits: CustomerCreditStore,
    private readonly customers: CustomerDirectory,
  ) {}

  async credit(ctx: EventContext & { requestId: string }, request: CustomerCreditRequest): Promise<CustomerCredit> {
    const hash = creditHash(request);
    await this.customers.ensureExists(ctx, request.customerId, ctx.requestId);
    for (let attempt = 1; ; attempt++) {
      try {
        const { result } = await this.ledger.transaction((trx) => this.creditIn(trx, ctx, request, hash));
        return result;
      } catch (err) {
        if (pgErrorCode(err) !== PG_UNIQUE_VIOLATION || attempt >= ATTEMPTS) throw err;
      }
    }
  }

  private async creditIn(trx: Trx, ctx: EventContext, request: CustomerCreditRequest, hash: string) {
    const key = request.idempotencyKey;
    await this.credits.lockKey(trx, ctx, key);
    const stored = await this.credits.getByKey(trx, ctx, key);
    if (stored) {
      if (stored.requestHash !== hash) {
        throw new IdempotencyConflictError('This idempotency_key was already used with another credit', { field: 'idempotency_key', transaction_id: stored.transactionId });
      }
      const entry = await this.entries.byId(trx, ctx, stored.walletId, stored.transactionId);
      if (!entry) throw new Error(`customer credit ${key}: transaction ${stored.transactionId} is missing`);
      return { result: { walletId: stored.walletId, walletCreated: stored.walletCreated, entry, replayed: true }, events: [] };
    }
    const now = this.ledger.clock();
    if (request.expiryDate && request.expiryDate <= now) {
      throw new ValidationError('expiry_date must be in the future', { field: 'expiry_date' });
    }
    await this.customers.lockExisting(trx, ctx, request.customerId);
    await this.credits.lockPrepaidWallet(trx, ctx, request.customerId, request.currency);
    // Money becomes credits at the rate of the wallet that takes them, rounded up to 12 decimals (docs/api/wallets.md#money-billing-gives-back-as-credits).
    const creditsAt = (rate: Decimal) => request.credits ?? request.amount!.div(rate).toDecimalPlaces(12, Decimal.ROUND_UP);
    const input = {
      reason: request.reason,
      pending: false,
      expiryDate: request.expiryDate,
      priority: request.priority,
      description: request.description,
      idempotencyKey: key,
      requestHash: hash,
    };
    const existing = await this.wallets.existsOpen(trx, ctx, { customerId: request.customerId, currency: request.currency, walletType: 'PRE_PAID' });
    const out = existing
      ? await this.ledger.changeIn(trx, ctx, existing, async (change) => {
          change.requireActive();
          return credit(change, { ...input, credits: creditsAt(change.wallet.conversionRate) });
        })
      : await this.ledger.createIn(
          trx,
          ctx,
          prepaidWalletFor(ctx, request, now),
          async (change) => {
            change.announceWallet(WALLET_EVENTS.created);
            return credit(change, { ...input, credits: creditsAt(request.newWallet.conversionRate) });
          },
        );
    const made = { walletId: out.wallet.id, walletCreated: !existing, entry: out.result, replayed: false };
    await this.credits.insert(trx, ctx, key, request.customerId, { walletId: made.walletId, transactionId: made.entry.id, walletCreated: made.walletCreated, requestHash: hash }, now);
    return { result: made, events: out.events };
  }
}
