import type { DomainEvent, WebhookEventName } from '@billstream/contracts';
import type { Trx } from '@billstream/db';
import { ValidationError } from '@billstream/errors';
import { newId } from '@billstream/ids';
import { EXACT_ZERO, exactSum } from '@billstream/money';
import { newDomainEvent, type EventContext } from '@billstream/outbox';
import type { Decimal } from 'decimal.js';
import { WALLET_EVENTS } from '../events';
import type { LedgerEntry, SpendableCredit } from '../entries/domain';
import type { EntryStore } from '../entries/store';
import { entryView } from '../entries/view';
import type { Wallet } from '../wallets/domain';
import type { WalletStore } from '../wallets/store';
import { walletView } from '../wallets/view';

export interface ChangeDeps {
  wallets: WalletStore;
  entries: EntryStore;
}

/** The first spendable credits in spending order, as they stand inside a change. */
export interface SpendableCache {
  credits: SpendableCredit[];
  total: Decimal;
}

/**
 * One change of one wallet, inside the database transaction that holds the wallet's row
 * lock: the wallet as it changes and what the change has still to write. The verbs
 * (credit.ts, debit.ts, settle.ts, expire.ts, terminate.ts) act on it; writes.ts saves it.
 */
export class WalletChange {
  /** Events of the movements, in the order they happened. */
  readonly events: DomainEvent[] = [];
  /** Wallet events, published with the wallet as it is once the change is saved. */
  readonly walletEvents: WebhookEventName[] = [];
  /** Entry rows not written yet. */
  readonly inserts: LedgerEntry[] = [];
  /** Credits left on the credits debits consumed (credit id -> credits), not written yet. */
  readonly creditsLeft = new Map<string, Decimal>();
  spendable?: SpendableCache;
  /** The wallet row has to be saved. */
  dirty = false;
  /** CREDIT_EXPIRED debits written by this change. */
  expiredCount = 0;
  private ctx: EventContext;

  constructor(
    readonly trx: Trx,
    readonly wallet: Wallet,
    readonly deps: ChangeDeps,
    ctx: EventContext,
    readonly now: Date,
  ) {
    this.ctx = ctx;
  }

  /** Who the following events are attributed to (a batch serves several callers). */
  actAs(actor: string): void {
    this.ctx = { ...this.ctx, actor };
  }

  emit(type: WebhookEventName, payload: Record<string, unknown>): void {
    this.events.push(newDomainEvent(type, this.ctx, payload));
  }

  /** A wallet event of this change, with the wallet as the change leaves it. */
  walletEvent(type: WebhookEventName): DomainEvent {
    return newDomainEvent(type, this.ctx, { wallet: walletView(this.wallet) });
  }

  /** Publishes `type` with the wallet as it is once the change is saved (wallet.created comes first). */
  announceWallet(type: WebhookEventName): void {
    this.walletEvents.push(type);
    this.dirty = true;
  }

  findEntry(id: string): Promise<LedgerEntry | undefined> {
    return this.deps.entries.byId(this.trx, this.wallet, this.wallet.id, id);
  }

  findByIdempotencyKeys(keys: string[]): Promise<Map<string, LedgerEntry>> {
    return this.deps.entries.byIdempotencyKeys(this.trx, this.wallet, this.wallet.id, keys);
  }

  requireActive(): void {
    if (this.wallet.walletStatus !== 'active') {
      throw new ValidationError(`The wallet is ${this.wallet.walletStatus}; it takes no top-ups or debits`, {
        field: 'wallet_status',
        wallet_status: this.wallet.walletStatus,
      });
    }
  }

  /** Starts the spending cache with credits read for several wallets at once (`debitReads`). */
  primeSpendable(credits: SpendableCredit[]): void {
    this.spendable = { credits, total: exactSum(credits.map((c) => c.creditsAvailable)) };
  }

  /** A new ledger entry of this wallet, stamped with the change's time. */
  newEntry(fields: Pick<LedgerEntry, 'type' | 'status' | 'creditAmount' | 'amount' | 'reason'> & Partial<LedgerEntry>): LedgerEntry {
    const balance = this.wallet.creditBalance;
    return {
      id: newId('walletTransaction'),
      walletId: this.wallet.id,
      tenantId: this.wallet.tenantId,
      environmentId: this.wallet.environmentId,
      creditBalanceBefore: balance,
      creditBalanceAfter: balance,
      creditsAvailable: EXACT_ZERO,
      expiryDate: null,
      priority: null,
      description: null,
      idempotencyKey: null,
      requestHash: null,
      expiredCreditId: null,
      ledgerSeq: null,
      createdAt: this.now,
      updatedAt: this.now,
      ...fields,
    };
  }

  /** Moves the balance by `delta` and gives the movement its place in the ledger. */
  move(entry: LedgerEntry, delta: Decimal): void {
    entry.creditBalanceBefore = this.wallet.creditBalance;
    this.wallet.creditBalance = this.wallet.creditBalance.plus(delta);
    entry.creditBalanceAfter = this.wallet.creditBalance;
    this.wallet.ledgerSeq += 1;
    entry.ledgerSeq = this.wallet.ledgerSeq;
    this.dirty = true;
  }

  /** Buffers the new entry's row and its event (wallet.transaction.created on the wire). */
  record(entry: LedgerEntry): LedgerEntry {
    this.inserts.push(entry);
    this.emit(WALLET_EVENTS.entryCreated, { transaction: entryView(entry) });
    return entry;
  }
}
