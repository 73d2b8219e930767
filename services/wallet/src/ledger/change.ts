import { TOPICS } from '@billstream/bus';
import type { DomainEvent } from '@billstream/contracts';
import type { Knex, Trx } from '@billstream/db';
import { ValidationError } from '@billstream/errors';
import { newId } from '@billstream/ids';
import { newDomainEvent, outboxInsertMany, type EventContext } from '@billstream/outbox';
import type { Decimal } from 'decimal.js';
import { alertMove, alertStateOf, thresholdOf } from '../alerts/alerts';
import { autoTopupDue } from '../alerts/auto-topup';
import { WALLET_EVENTS } from '../events';
import { str, sumOf, ZERO } from '../exact';
import type { CreditReason, DebitReason, TransactionStatus, WalletTransaction } from '../transactions/domain';
import type { SpendableCredit, TransactionStore } from '../transactions/store';
import { transactionView } from '../transactions/view';
import type { AlertState, Wallet } from '../wallets/domain';
import type { WalletStore } from '../wallets/store';
import { runTogether } from './statements';
import { realTimeCreditBalance, walletView } from '../wallets/view';

export interface CreditInput {
  credits: Decimal;
  reason: CreditReason;
  pending: boolean;
  expiryDate: Date | null;
  priority: number | null;
  description: string | null;
  idempotencyKey: string | null;
  requestHash: string | null;
}

export interface DebitInput {
  credits: Decimal;
  reason: DebitReason;
  description: string | null;
  idempotencyKey: string | null;
  requestHash: string | null;
}

/** The writes of a finished change, as data. */
export interface ChangeParts {
  walletId: string;
  inserts: WalletTransaction[];
  creditsLeft: Array<{ id: string; creditsAvailable: Decimal }>;
  /** The wallet when its row changed. */
  wallet: Wallet | null;
  events: DomainEvent[];
}

/**
 * The statements that save finished changes (of one wallet or several): one insert of
 * transaction rows, one update of credits left, one update of wallet rows, one outbox insert.
 */
export function writesOf(trx: Trx, deps: ChangeDeps, parts: ChangeParts[], now: Date): Array<Knex.QueryBuilder | Knex.Raw> {
  const writes: Array<Knex.QueryBuilder | Knex.Raw> = [];
  const inserts = parts.flatMap((p) => p.inserts);
  if (inserts.length > 0) writes.push(deps.transactions.insertMany(trx, inserts));
  const creditsLeft = parts.flatMap((p) => p.creditsLeft);
  if (creditsLeft.length > 0) writes.push(deps.transactions.setCreditsAvailable(trx, creditsLeft, now));
  const wallets = parts.flatMap((p) => (p.wallet ? [p.wallet] : []));
  if (wallets.length === 1) writes.push(deps.wallets.update(trx, wallets[0]));
  else if (wallets.length > 1) writes.push(deps.wallets.updateLedgerMany(trx, wallets));
  const events = parts.flatMap((p) => p.events.map((event) => ({ key: p.walletId, event })));
  if (events.length > 0) writes.push(outboxInsertMany(trx, TOPICS.walletEvents, events));
  return writes;
}

export interface ChangeDeps {
  wallets: WalletStore;
  transactions: TransactionStore;
}

/**
 * One change of one wallet, inside the transaction that holds the wallet's row lock.
 * Every movement writes a transaction row with its before/after balances and updates the
 * credits it consumed; `finish` applies auto top-up and alerts, saves the wallet once and
 * writes the events to the outbox.
 */
export class WalletChange {
  private readonly events: DomainEvent[] = [];
  private readonly walletEvents: string[] = [];
  /** Writes buffered until `flush`: new transactions and the credits left on consumed credits. */
  private readonly inserts: WalletTransaction[] = [];
  private readonly creditsLeft = new Map<string, Decimal>();
  /** The first spendable credits in spending order, as they stand inside this change. */
  private spendCache?: { credits: SpendableCredit[]; total: Decimal };
  private ctx: EventContext;
  private dirty = false;
  /** CREDIT_EXPIRED debits written by this change. */
  expiredCount = 0;

  constructor(
    private readonly trx: Trx,
    readonly wallet: Wallet,
    private readonly deps: ChangeDeps,
    ctx: EventContext,
    readonly now: Date,
  ) {
    this.ctx = ctx;
  }

  /** Who the following events are attributed to (a batch serves several callers). */
  actAs(actor: string): void {
    this.ctx = { ...this.ctx, actor };
  }

  emit(type: string, payload: Record<string, unknown>): void {
    this.events.push(newDomainEvent(type, this.ctx, payload));
  }

  /** Publishes `type` with the wallet as it is once the change is saved (wallet.created comes first). */
  announceWallet(type: string): void {
    this.walletEvents.push(type);
    this.dirty = true;
  }

  findTransaction(id: string): Promise<WalletTransaction | undefined> {
    return this.deps.transactions.byId(this.trx, this.wallet.id, id);
  }

  findByIdempotencyKeys(keys: string[]): Promise<Map<string, WalletTransaction>> {
    return this.deps.transactions.byIdempotencyKeys(this.trx, this.wallet.id, keys);
  }

  requireActive(): void {
    if (this.wallet.walletStatus !== 'active') {
      throw new ValidationError(`The wallet is ${this.wallet.walletStatus}; it takes no top-ups or debits`, {
        field: 'wallet_status',
        wallet_status: this.wallet.walletStatus,
      });
    }
  }

  private newTransaction(fields: Pick<WalletTransaction, 'type' | 'status' | 'creditAmount' | 'amount' | 'reason'> & Partial<WalletTransaction>): WalletTransaction {
    const balance = this.wallet.creditBalance;
    return {
      id: newId('walletTransaction'),
      walletId: this.wallet.id,
      tenantId: this.wallet.tenantId,
      environmentId: this.wallet.environmentId,
      creditBalanceBefore: balance,
      creditBalanceAfter: balance,
      creditsAvailable: ZERO,
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
  private move(txn: WalletTransaction, delta: Decimal): void {
    txn.creditBalanceBefore = this.wallet.creditBalance;
    this.wallet.creditBalance = this.wallet.creditBalance.plus(delta);
    txn.creditBalanceAfter = this.wallet.creditBalance;
    this.wallet.ledgerSeq += 1;
    txn.ledgerSeq = this.wallet.ledgerSeq;
    this.dirty = true;
  }

  private record(txn: WalletTransaction): WalletTransaction {
    this.inserts.push(txn);
    this.emit(WALLET_EVENTS.transactionCreated, { transaction: transactionView(txn) });
    return txn;
  }

  /** The buffered transaction rows and credit updates, as statements (emptying the buffers). */
  private takeWrites(): Array<Knex.QueryBuilder | Knex.Raw> {
    const writes: Array<Knex.QueryBuilder | Knex.Raw> = [];
    if (this.inserts.length > 0) writes.push(this.deps.transactions.insertMany(this.trx, this.inserts.splice(0)));
    if (this.creditsLeft.size > 0) {
      const updates = [...this.creditsLeft].map(([id, creditsAvailable]) => ({ id, creditsAvailable }));
      this.creditsLeft.clear();
      writes.push(this.deps.transactions.setCreditsAvailable(this.trx, updates, this.now));
    }
    return writes;
  }

  /** Sends the buffered writes to the database (before reading what they change). */
  private async flush(): Promise<void> {
    await runTogether(this.trx, this.takeWrites());
  }

  /**
   * The spendable credits covering `credits`, from the cache when it covers them (the
   * debits of a batch share one read), else read again after flushing this change's writes.
   */
  private async spendableFor(credits: Decimal, hint: Decimal): Promise<SpendableCredit[]> {
    if (this.spendCache && this.spendCache.total.greaterThanOrEqualTo(credits)) return this.spendCache.credits;
    await this.flush();
    const wanted = maxOf(credits, hint);
    const rows = await this.deps.transactions.spendable(this.trx, this.wallet.id, wanted, this.now);
    this.spendCache = { credits: rows, total: rows.reduce((s, r) => s.plus(r.creditsAvailable), ZERO) };
    return rows;
  }

  async credit(input: CreditInput): Promise<WalletTransaction> {
    const status: TransactionStatus = input.pending ? 'PENDING' : 'COMPLETED';
    const txn = this.newTransaction({
      type: 'CREDIT',
      status,
      creditAmount: input.credits,
      amount: input.credits.times(this.wallet.topupConversionRate),
      reason: input.reason,
      expiryDate: input.expiryDate,
      priority: input.priority,
      description: input.description,
      idempotencyKey: input.idempotencyKey,
      requestHash: input.requestHash,
    });
    if (input.pending) {
      this.wallet.pendingCredits = this.wallet.pendingCredits.plus(input.credits);
      this.dirty = true;
    } else {
      txn.creditsAvailable = input.credits;
      this.move(txn, input.credits);
      this.spendCache = undefined;
    }
    return this.record(txn);
  }

  /**
   * Spends `credits` from the usable credits in the spec's order; more than usable: 400 and
   * nothing changes. `hint` (the total of a batch) lets one read serve the debits that follow.
   */
  async debit(input: DebitInput, hint: Decimal = ZERO): Promise<WalletTransaction> {
    this.refuseOverdraft(input.credits);
    let spendable = await this.spendableFor(input.credits, hint);
    if (sumOf(spendable.map((c) => c.creditsAvailable)).lessThan(input.credits)) {
      // Credits that expired in a change committed while this one waited for the lock:
      // write them off, then check again.
      await this.flush();
      this.spendCache = undefined;
      await this.expireDue();
      this.refuseOverdraft(input.credits);
      spendable = await this.spendableFor(input.credits, hint);
    }
    let remaining = input.credits;
    for (const credit of spendable) {
      if (remaining.isZero()) break;
      if (credit.creditsAvailable.isZero()) continue;
      const take = minOf(credit.creditsAvailable, remaining);
      credit.creditsAvailable = credit.creditsAvailable.minus(take);
      this.creditsLeft.set(credit.id, credit.creditsAvailable);
      remaining = remaining.minus(take);
    }
    if (!remaining.isZero()) {
      throw new Error(`ledger of ${this.wallet.id} does not add up: balance ${str(this.wallet.creditBalance)} but spendable credits fall short`);
    }
    this.spendCache!.total = this.spendCache!.total.minus(input.credits);
    return this.recordDebit(input, input.credits);
  }

  private refuseOverdraft(credits: Decimal): void {
    const usable = this.wallet.creditBalance;
    if (credits.greaterThan(usable)) {
      throw new ValidationError('Insufficient credits: the debit is larger than the usable credits of the wallet', {
        field: 'credits',
        available_credits: str(usable),
        requested_credits: str(credits),
      });
    }
  }

  private async recordDebit(input: DebitInput & { expiredCreditId?: string }, credits: Decimal): Promise<WalletTransaction> {
    const txn = this.newTransaction({
      type: 'DEBIT',
      status: 'COMPLETED',
      creditAmount: credits,
      amount: credits.times(this.wallet.conversionRate),
      reason: input.reason,
      description: input.description,
      idempotencyKey: input.idempotencyKey,
      requestHash: input.requestHash,
      expiredCreditId: input.expiredCreditId ?? null,
    });
    this.move(txn, credits.negated());
    this.record(txn);
    await this.autoTopupOnCrossing(txn.creditBalanceBefore);
    return txn;
  }

  /** One auto top-up when this movement took the balance from at or above the threshold to below it. */
  private async autoTopupOnCrossing(balanceBefore: Decimal): Promise<void> {
    if (!autoTopupDue(this.wallet, balanceBefore)) return;
    const auto = this.wallet.autoTopup!;
    await this.credit({
      credits: auto.amount!,
      reason: auto.invoicing ? 'PURCHASED_CREDIT_INVOICED' : 'PURCHASED_CREDIT_DIRECT',
      pending: auto.invoicing,
      expiryDate: null,
      priority: null,
      description: 'Auto top-up',
      idempotencyKey: null,
      requestHash: null,
    });
  }

  /** Writes one CREDIT_EXPIRED debit per credit whose expiry has passed; returns how many. */
  async expireDue(): Promise<number> {
    const expired = await this.deps.transactions.expiredWithCredits(this.trx, this.wallet.id, this.now);
    for (const credit of expired) {
      this.creditsLeft.set(credit.id, ZERO);
      await this.recordDebit(
        {
          credits: credit.creditsAvailable,
          reason: 'CREDIT_EXPIRED',
          description: `Credits of ${credit.id} expired`,
          idempotencyKey: null,
          requestHash: null,
          expiredCreditId: credit.id,
        },
        credit.creditsAvailable,
      );
    }
    this.expiredCount += expired.length;
    return expired.length;
  }

  /** Completes or fails a pending transaction. */
  async settle(txn: WalletTransaction, status: 'COMPLETED' | 'FAILED'): Promise<WalletTransaction> {
    if (txn.status !== 'PENDING') {
      throw new ValidationError(`The transaction is ${txn.status}; only a PENDING transaction can be settled`, {
        field: 'status',
        transaction_status: txn.status,
      });
    }
    if (status === 'COMPLETED') this.requireActive();
    const sign = txn.type === 'CREDIT' ? txn.creditAmount : txn.creditAmount.negated();
    this.wallet.pendingCredits = this.wallet.pendingCredits.minus(sign);
    this.dirty = true;
    txn.status = status;
    txn.updatedAt = this.now;
    if (status === 'COMPLETED') {
      if (txn.type === 'CREDIT') txn.creditsAvailable = txn.creditAmount;
      this.move(txn, sign);
      this.spendCache = undefined;
    }
    await this.deps.transactions.update(this.trx, txn);
    if (status === 'COMPLETED' && txn.expiryDate && txn.expiryDate <= this.now) {
      await this.flush();
      await this.expireDue();
    }
    return txn;
  }

  /** Closes the wallet for good: remaining credits debited, pending transactions failed. */
  async terminate(): Promise<void> {
    if (this.wallet.walletStatus === 'closed') {
      throw new ValidationError('The wallet is already closed', { field: 'wallet_status', wallet_status: 'closed' });
    }
    for (const pending of await this.deps.transactions.pending(this.trx, this.wallet.id)) {
      await this.settle(pending, 'FAILED');
    }
    this.wallet.walletStatus = 'closed';
    if (this.wallet.creditBalance.greaterThan(0)) {
      await this.debit({
        credits: this.wallet.creditBalance,
        reason: 'WALLET_TERMINATION',
        description: 'Wallet terminated',
        idempotencyKey: null,
        requestHash: null,
      });
    }
    this.wallet.walletStatus = 'closed';
    this.dirty = true;
  }

  /**
   * Alert states, then everything the change wrote (transaction rows, credit updates, the
   * wallet row, the outbox rows of its events) in one statement. Returns the events.
   */
  async finish(): Promise<DomainEvent[]> {
    const parts = this.finishParts();
    await runTogether(this.trx, writesOf(this.trx, this.deps, [parts], this.now));
    return parts.events;
  }

  /** What `finish` writes, as data, so that the changes of several wallets are saved together. */
  finishParts(): ChangeParts {
    if (this.wallet.walletStatus !== 'closed') this.updateAlerts();
    const parts: ChangeParts = {
      walletId: this.wallet.id,
      inserts: this.inserts.splice(0),
      creditsLeft: [...this.creditsLeft].map(([id, creditsAvailable]) => ({ id, creditsAvailable })),
      wallet: null,
      events: [],
    };
    this.creditsLeft.clear();
    if (this.dirty) {
      this.wallet.version += 1;
      this.wallet.updatedAt = this.now;
      parts.wallet = this.wallet;
    }
    const announce = (type: string) => newDomainEvent(type, this.ctx, { wallet: walletView(this.wallet) });
    const leading = this.walletEvents.filter((t) => t === WALLET_EVENTS.created).map(announce);
    const trailing = this.walletEvents.filter((t) => t !== WALLET_EVENTS.created).map(announce);
    parts.events = [...leading, ...this.events, ...trailing];
    return parts;
  }

  /** Starts the spending cache with credits read for several wallets at once (`debitReads`). */
  primeSpendable(credits: SpendableCredit[]): void {
    this.spendCache = { credits, total: sumOf(credits.map((c) => c.creditsAvailable)) };
  }

  private updateAlerts(): void {
    const w = this.wallet;
    const previous = { credit: w.alertState, ongoing: w.ongoingAlertState };
    w.alertState = alertStateOf(w.alertSettings, w.creditBalance);
    w.ongoingAlertState = alertStateOf(w.alertSettings, realTimeCreditBalance(w));
    if (w.alertState === previous.credit && w.ongoingAlertState === previous.ongoing) return;
    this.dirty = true;
    this.announce('credit_balance', previous.credit, w.alertState, w.creditBalance);
    this.announce('ongoing_balance', previous.ongoing, w.ongoingAlertState, realTimeCreditBalance(w));
  }

  private announce(kind: 'credit_balance' | 'ongoing_balance', previous: AlertState, next: AlertState, balance: Decimal): void {
    const move = alertMove(previous, next);
    if (!move) return;
    const threshold = thresholdOf(this.wallet.alertSettings, move === 'dropped' ? next : previous);
    this.emit(ALERT_EVENTS[kind][move], {
      wallet: walletView(this.wallet),
      alert: {
        kind,
        state: next,
        previous_state: previous,
        balance: str(balance),
        threshold: threshold ? str(threshold) : null,
      },
    });
  }
}

const ALERT_EVENTS = {
  credit_balance: { dropped: WALLET_EVENTS.creditBalanceDropped, recovered: WALLET_EVENTS.creditBalanceRecovered },
  ongoing_balance: { dropped: WALLET_EVENTS.ongoingBalanceDropped, recovered: WALLET_EVENTS.ongoingBalanceRecovered },
} as const;

function minOf(a: Decimal, b: Decimal): Decimal {
  return a.lessThan(b) ? a : b;
}

function maxOf(a: Decimal, b: Decimal): Decimal {
  return a.greaterThan(b) ? a : b;
}
