import type { DomainEvent } from '@billstream/contracts';
import type { Db, Trx } from '@billstream/db';
import { NotFoundError } from '@billstream/errors';
import type { EventContext } from '@billstream/outbox';
import type { Wallet } from '../wallets/domain';
import { WalletChange, type ChangeDeps } from './change';
import { expireDue } from './expire';
import { runTogether } from './statements';
import { finish, finishParts, writesOf } from './writes';

export type Clock = () => Date;

export interface LedgerDeps extends ChangeDeps {
  db: Db;
  clock: Clock;
  /** Called after a commit that wrote outbox rows (the relay's nudge). */
  published(): void;
}

/**
 * Runs every change of a wallet's balance: one database transaction that locks the wallet
 * row (SELECT ... FOR UPDATE), first writes off credits whose expiry has passed, applies the
 * change, then saves the wallet, its ledger entries and its events (outbox) together.
 */
export class Ledger {
  constructor(private readonly deps: LedgerDeps) {}

  get clock(): Clock {
    return this.deps.clock;
  }

  /** Applies `fn` to the locked wallet inside `trx` (the caller commits). */
  async changeIn<T>(trx: Trx, ctx: EventContext, walletId: string, fn: (change: WalletChange) => Promise<T>): Promise<{ result: T; wallet: Wallet; events: DomainEvent[] }> {
    const now = this.deps.clock();
    const locked = await this.deps.wallets.lock(trx, ctx, walletId, now);
    if (!locked) throw new NotFoundError(`Wallet ${walletId} not found`, { wallet_id: walletId });
    const change = new WalletChange(trx, locked.wallet, this.deps, ctx, now);
    if (locked.expiryDue) await expireDue(change);
    const result = await fn(change);
    const events = await finish(change);
    return { result, wallet: locked.wallet, events };
  }

  /** Inserts a new wallet and applies `fn` to it (initial credits) inside `trx`. */
  async createIn<T>(trx: Trx, ctx: EventContext, wallet: Wallet, fn: (change: WalletChange) => Promise<T>): Promise<{ result: T; wallet: Wallet; events: DomainEvent[] }> {
    await this.deps.wallets.insert(trx, wallet);
    const change = new WalletChange(trx, wallet, this.deps, ctx, wallet.createdAt);
    const result = await fn(change);
    const events = await finish(change);
    return { result, wallet, events };
  }

  /** Runs `fn` in a new database transaction and announces the events it wrote after the commit. */
  async transaction<T extends { events: DomainEvent[] }>(fn: (trx: Trx) => Promise<T>): Promise<T> {
    const out = await this.deps.db.transaction(fn);
    if (out.events.length > 0) this.deps.published();
    return out;
  }

  /**
   * Changes several wallets in one database transaction: one statement locks them all (in id order),
   * `fn` applies the changes (undefined for a wallet that does not exist), and one statement
   * saves them all. The caller groups the work; each wallet's change is still a WalletChange
   * with its own checks.
   */
  async changeMany<T>(
    targets: Array<{ ctx: EventContext; walletId: string }>,
    fn: (changes: Array<WalletChange | undefined>, trx: Trx) => Promise<T>,
  ): Promise<{ result: T; events: DomainEvent[] }> {
    return this.transaction((trx) => this.changeManyIn(trx, targets, fn));
  }

  /**
   * `changeMany` inside `trx` (the caller commits): for work that writes its own rows beside the
   * changes. `created` are new wallets, inserted in one statement before the locks and changed
   * like the others (`createIn` for many): their changes follow the targets' in `fn`'s list.
   */
  async changeManyIn<T>(
    trx: Trx,
    targets: Array<{ ctx: EventContext; walletId: string }>,
    fn: (changes: Array<WalletChange | undefined>, trx: Trx) => Promise<T>,
    created: Array<{ ctx: EventContext; wallet: Wallet }> = [],
  ): Promise<{ result: T; events: DomainEvent[] }> {
    const now = this.deps.clock();
    await this.deps.wallets.insertMany(trx, created.map((c) => c.wallet));
    const locked = await this.deps.wallets.lockMany(
      trx,
      targets.map((t) => ({ scope: t.ctx, id: t.walletId })),
      now,
    );
    const changes = locked.map((l, i) => l && new WalletChange(trx, l.wallet, this.deps, targets[i].ctx, now));
    for (const [i, change] of changes.entries()) if (change && locked[i]!.expiryDue) await expireDue(change);
    const all = [...changes, ...created.map((c) => new WalletChange(trx, c.wallet, this.deps, c.ctx, c.wallet.createdAt))];
    const result = await fn(all, trx);
    const parts = all.flatMap((c) => (c ? [finishParts(c)] : []));
    await runTogether(trx, writesOf(trx, this.deps, parts, now));
    return { result, events: parts.flatMap((p) => p.events) };
  }

  /** Applies `fn` in a database transaction of its own and announces the events after the commit. */
  async change<T>(ctx: EventContext, walletId: string, fn: (change: WalletChange) => Promise<T>): Promise<{ result: T; wallet: Wallet; events: DomainEvent[] }> {
    return this.transaction((trx) => this.changeIn(trx, ctx, walletId, fn));
  }
}
