import { DomainError, NotFoundError } from '@billstream/errors';
import { exactSum } from '@billstream/money';
import type { EventContext } from '@billstream/outbox';
import type { Decimal } from 'decimal.js';
import type { WalletChange } from '../ledger/change';
import { debit } from '../ledger/debit';
import type { Ledger } from '../ledger/ledger';
import type { DebitRequest, MovementResult, LedgerEntry } from './domain';
import { replayOf } from './idempotency';
import type { EntryStore } from './store';

interface QueuedDebit {
  /** When it was submitted (performance.now()). */
  at: number;
  key: string;
  walletId: string;
  ctx: EventContext;
  request: DebitRequest;
  hash: string;
  resolve(result: MovementResult): void;
  reject(err: unknown): void;
}

/** Rolls back a batch in which no debit moved money, so refused calls leave no trace. */
class NothingMoved extends Error {}

export interface DebitBatcherOptions {
  /** Most debits in one database transaction. */
  maxBatch?: number;
  /** Most database transactions of debits at once (each on other wallets). */
  maxConcurrent?: number;
  /**
   * A transaction beyond the first starts only once the oldest waiting debit has waited this
   * long (ms): while the database keeps up, one transaction at a time makes the largest batches;
   * when it does not (a slower machine, a batch waiting on a lock), the next batch overlaps.
   */
  overlapAfterMs?: number;
}

/**
 * Group commit for debits. Debits that arrive while the database is busy wait, and the next
 * database transaction takes all of them (up to `maxBatch`, whatever their wallets): one statement
 * locks their wallets, one reads the idempotency keys and the spendable credits, one saves
 * every change, one commit. Each debit still gets its own checks (idempotency, status,
 * overdraft) in arrival order, its own entry row and its own answer; a refused debit
 * does not affect the others. Debits of one wallet never run in two transactions at once,
 * so a wallet's debits keep their order; at most `maxConcurrent` transactions run together.
 * A hot wallet then pays one commit per batch, and 1,000 quiet wallets share their commits.
 * Across replicas the row locks (always taken in id order) keep batches apart.
 */
export class DebitBatcher {
  private waiting: QueuedDebit[] = [];
  /** Wallets (tenant, environment, id) in a running transaction. */
  private readonly busy = new Set<string>();
  private running = 0;
  private readonly maxBatch: number;
  private readonly maxConcurrent: number;
  private readonly overlapAfterMs: number;
  private retry?: NodeJS.Timeout;

  constructor(
    private readonly ledger: Ledger,
    private readonly entries: EntryStore,
    options: DebitBatcherOptions = {},
  ) {
    this.maxBatch = options.maxBatch ?? 100;
    this.maxConcurrent = options.maxConcurrent ?? 1;
    this.overlapAfterMs = options.overlapAfterMs ?? 0;
  }

  submit(ctx: EventContext, walletId: string, request: DebitRequest, hash: string): Promise<MovementResult> {
    const key = `${ctx.tenantId}\u0000${ctx.environmentId}\u0000${walletId}`;
    return new Promise<MovementResult>((resolve, reject) => {
      this.waiting.push({ at: performance.now(), key, walletId, ctx, request, hash, resolve, reject });
      this.pump();
    });
  }

  /** Starts transactions while there is room and waiting debits of wallets not already in one. */
  private pump(): void {
    while (this.running < this.maxConcurrent && this.waiting.length > 0) {
      if (this.running > 0 && this.overlapAfterMs > 0) {
        const waited = performance.now() - this.waiting[0]!.at;
        if (waited < this.overlapAfterMs) {
          this.retry ??= setTimeout(() => {
            this.retry = undefined;
            this.pump();
          }, Math.ceil(this.overlapAfterMs - waited));
          return;
        }
      }
      const batch: QueuedDebit[] = [];
      const rest: QueuedDebit[] = [];
      for (const d of this.waiting) {
        if (batch.length < this.maxBatch && !this.busy.has(d.key)) batch.push(d);
        else rest.push(d);
      }
      if (batch.length === 0) return;
      // A wallet whose debits did not all fit waits for this batch: its order holds.
      for (const d of batch) this.busy.add(d.key);
      this.waiting = rest;
      this.running += 1;
      void this.run(batch).finally(() => {
        for (const d of batch) this.busy.delete(d.key);
        this.running -= 1;
        this.pump();
      });
    }
  }

  private async run(batch: QueuedDebit[]): Promise<void> {
    const groups = new Map<string, QueuedDebit[]>();
    for (const d of batch) {
      const group = groups.get(d.key);
      if (group) group.push(d);
      else groups.set(d.key, [d]);
    }
    const wallets = [...groups.values()];
    const outcomes = new Map<QueuedDebit, { result?: MovementResult; error?: unknown }>();
    try {
      await this.ledger.changeMany(
        wallets.map((debits) => ({ ctx: debits[0].ctx, walletId: debits[0].walletId })),
        async (changes, trx) => {
          const pairs = batch.flatMap((d) => (d.request.idempotencyKey ? [{ walletId: d.walletId, key: d.request.idempotencyKey }] : []));
          const hints = new Map<string, Decimal>();
          for (const [i, debits] of wallets.entries()) {
            if (changes[i]) hints.set(debits[0].walletId, exactSum(debits.map((d) => d.request.credits)));
          }
          const now = changes.find(Boolean)?.now ?? this.ledger.clock();
          const { earlier, spendable } = await this.entries.debitReads(trx, pairs, hints, now);
          for (const [i, debits] of wallets.entries()) {
            const change = changes[i];
            const walletId = debits[0].walletId;
            if (!change) {
              for (const d of debits) outcomes.set(d, { error: new NotFoundError(`Wallet ${walletId} not found`, { wallet_id: walletId }) });
              continue;
            }
            change.primeSpendable(spendable.get(walletId) ?? []);
            const known = earlier.get(walletId) ?? new Map<string, LedgerEntry>();
            const hint = hints.get(walletId)!;
            for (const d of debits) {
              change.actAs(d.ctx.actor);
              try {
                outcomes.set(d, { result: await this.one(change, d, known, hint) });
              } catch (err) {
                if (!(err instanceof DomainError)) throw err;
                outcomes.set(d, { error: err });
              }
            }
          }
          if (![...outcomes.values()].some((o) => o.result && !o.result.replayed)) throw new NothingMoved();
        },
      );
    } catch (err) {
      if (!(err instanceof NothingMoved)) {
        for (const d of batch) d.reject(err);
        return;
      }
    }
    for (const d of batch) {
      const outcome = outcomes.get(d)!;
      if (outcome.error) d.reject(outcome.error);
      else d.resolve(outcome.result!);
    }
  }

  private async one(change: WalletChange, d: QueuedDebit, earlier: Map<string, LedgerEntry>, hint: Decimal): Promise<MovementResult> {
    const key = d.request.idempotencyKey;
    const previous = key ? earlier.get(key) : undefined;
    if (previous) return { entry: replayOf(previous, d.hash), replayed: true };
    change.requireActive();
    const entry = await debit(change, { ...d.request, requestHash: d.hash }, hint);
    if (key) earlier.set(key, entry);
    return { entry, replayed: false };
  }
}
