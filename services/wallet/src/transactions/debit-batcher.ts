import { DomainError } from '@billstream/errors';
import type { EventContext } from '@billstream/outbox';
import type { Decimal } from 'decimal.js';
import { sumOf } from '../exact';
import type { WalletChange } from '../ledger/change';
import type { Ledger } from '../ledger/ledger';
import type { WalletTransaction } from './domain';
import { replayOf } from './idempotency';
import type { DebitRequest, MovementResult } from './service';

interface QueuedDebit {
  ctx: EventContext;
  request: DebitRequest;
  hash: string;
  resolve(result: MovementResult): void;
  reject(err: unknown): void;
}

/** Rolls back a batch in which no debit moved money, so refused calls leave no trace. */
class NothingMoved extends Error {}

interface WalletQueue {
  waiting: QueuedDebit[];
  running: boolean;
}

/**
 * Group commit for debits of one wallet. While a debit transaction of a wallet runs, the
 * debits that arrive for it wait; the next transaction takes all of them (up to `maxBatch`)
 * under one row lock and one commit. Each debit still gets its own transaction row, its own
 * checks (idempotency, status, overdraft) in arrival order, and its own answer; one refused
 * debit does not affect the others. A hot wallet then pays one commit per batch, not one
 * per debit. Across replicas the row lock keeps batches in order.
 */
export class DebitBatcher {
  private readonly queues = new Map<string, WalletQueue>();

  constructor(
    private readonly ledger: Ledger,
    private readonly maxBatch = 200,
  ) {}

  submit(ctx: EventContext, walletId: string, request: DebitRequest, hash: string): Promise<MovementResult> {
    const key = `${ctx.tenantId}\u0000${ctx.environmentId}\u0000${walletId}`;
    return new Promise<MovementResult>((resolve, reject) => {
      let queue = this.queues.get(key);
      if (!queue) {
        queue = { waiting: [], running: false };
        this.queues.set(key, queue);
      }
      queue.waiting.push({ ctx, request, hash, resolve, reject });
      if (!queue.running) void this.drain(key, walletId, queue);
    });
  }

  private async drain(key: string, walletId: string, queue: WalletQueue): Promise<void> {
    queue.running = true;
    while (queue.waiting.length > 0) {
      const batch = queue.waiting.splice(0, this.maxBatch);
      await this.run(walletId, batch);
    }
    queue.running = false;
    this.queues.delete(key);
  }

  private async run(walletId: string, batch: QueuedDebit[]): Promise<void> {
    const outcomes: Array<{ result?: MovementResult; error?: unknown }> = [];
    try {
      await this.ledger.change(batch[0].ctx, walletId, async (change) => {
        const keys = batch.map((d) => d.request.idempotencyKey).filter((k): k is string => k !== null);
        const earlier = await change.findByIdempotencyKeys(keys);
        const hint = sumOf(batch.map((d) => d.request.credits));
        for (const [i, d] of batch.entries()) {
          change.actAs(d.ctx.actor);
          try {
            outcomes[i] = { result: await this.one(change, d, earlier, hint) };
          } catch (err) {
            if (!(err instanceof DomainError)) throw err;
            outcomes[i] = { error: err };
          }
        }
        if (!outcomes.some((o) => o.result && !o.result.replayed)) throw new NothingMoved();
      });
    } catch (err) {
      if (!(err instanceof NothingMoved)) {
        for (const d of batch) d.reject(err);
        return;
      }
    }
    batch.forEach((d, i) => (outcomes[i].error ? d.reject(outcomes[i].error) : d.resolve(outcomes[i].result!)));
  }

  private async one(change: WalletChange, d: QueuedDebit, earlier: Map<string, WalletTransaction>, hint: Decimal): Promise<MovementResult> {
    const key = d.request.idempotencyKey;
    const previous = key ? earlier.get(key) : undefined;
    if (previous) return { transaction: replayOf(previous, d.hash), replayed: true };
    change.requireActive();
    const transaction = await change.debit({ ...d.request, requestHash: d.hash }, hint);
    if (key) earlier.set(key, transaction);
    return { transaction, replayed: false };
  }
}
