import type { Db } from '@billstream/db';
import { DomainError, NotFoundError, ValidationError, VersionConflictError } from '@billstream/errors';
import { metricsEnabled, recordDebit } from '@billstream/observability';
import { toDecimalString } from '@billstream/money';
import type { EventContext } from '@billstream/outbox';
import { credit } from '../ledger/credit';
import type { Ledger } from '../ledger/ledger';
import { settle } from '../ledger/settle';
import type { WalletStore } from '../wallets/store';
import type { DebitRequest, MovementResult, TopupInput, EntryFilter, LedgerEntry } from './domain';
import type { DebitBatcher } from './debit-batcher';
import { replayOf, requestHash } from './idempotency';
import type { EntryStore } from './store';

export class EntryService {
  constructor(
    private readonly db: Db,
    private readonly wallets: WalletStore,
    private readonly entries: EntryStore,
    private readonly ledger: Ledger,
    private readonly batcher: DebitBatcher,
  ) {}

  async topup(ctx: EventContext, walletId: string, input: TopupInput): Promise<MovementResult> {
    if (input.expiryDate && input.expiryDate <= this.ledger.clock()) {
      throw new ValidationError('expiry_date_utc must be in the future', { field: 'expiry_date_utc' });
    }
    const hash = requestHash({
      op: 'topup',
      credits: toDecimalString(input.credits),
      reason: input.reason,
      expiry: input.expiryDate?.toISOString() ?? null,
      priority: input.priority,
      description: input.description,
    });
    const { result } = await this.ledger.change(ctx, walletId, async (change) => {
      const key = input.idempotencyKey;
      const earlier = key ? (await change.findByIdempotencyKeys([key])).get(key) : undefined;
      if (earlier) return { entry: replayOf(earlier, hash), replayed: true };
      change.requireActive();
      const entry = credit(change, {
        credits: input.credits,
        reason: input.reason,
        pending: input.reason === 'PURCHASED_CREDIT_INVOICED',
        expiryDate: input.expiryDate,
        priority: input.priority,
        description: input.description,
        idempotencyKey: input.idempotencyKey,
        requestHash: hash,
      });
      return { entry, replayed: false };
    });
    return result;
  }

  /** Debits go through the batcher: concurrent debits of one wallet share a transaction. */
  async debit(ctx: EventContext, walletId: string, input: DebitRequest): Promise<MovementResult> {
    const hash = requestHash({ op: 'debit', credits: toDecimalString(input.credits), reason: input.reason, description: input.description });
    if (!metricsEnabled()) return this.batcher.submit(ctx, walletId, input, hash);
    // billstream_wallet_debit_duration_seconds: the whole debit, its wait for a batch included.
    const started = process.hrtime.bigint();
    const seconds = () => Number(process.hrtime.bigint() - started) / 1e9;
    try {
      const result = await this.batcher.submit(ctx, walletId, input, hash);
      recordDebit('ok', seconds());
      return result;
    } catch (err) {
      recordDebit(err instanceof DomainError ? 'refused' : 'error', seconds());
      throw err;
    }
  }

  /**
   * The public route: a PENDING transaction of a client's. An invoiced top-up's credit is the
   * billing service's (its invoice paid settles it COMPLETED, its void FAILED; ADR 0056): 409
   * `version_conflict`, `details.code` `settled_by_invoice`, nothing changes.
   */
  async settle(ctx: EventContext, walletId: string, entryId: string, status: 'COMPLETED' | 'FAILED'): Promise<LedgerEntry> {
    const { result } = await this.ledger.change(ctx, walletId, async (change) => {
      const entry = await change.findEntry(entryId);
      if (!entry) throw new NotFoundError(`Transaction ${entryId} not found`, { transaction_id: entryId });
      if (entry.reason === 'PURCHASED_CREDIT_INVOICED') {
        throw new VersionConflictError('This credit belongs to an invoiced top-up: paying its invoice completes it, voiding the invoice fails it', {
          field: 'transaction_id',
          code: 'settled_by_invoice',
          transaction_reason: entry.reason,
          transaction_status: entry.status,
        });
      }
      return settle(change, entry, status);
    });
    return result;
  }

  /**
   * The billing service's route for an invoiced top-up's credit: PENDING settles; settled with
   * the same status answers it (a retry); settled otherwise is 409 `version_conflict` with
   * `details.transaction_status` (billing takes it as a failure, never as done).
   */
  async settleInvoiced(ctx: EventContext, walletId: string, entryId: string, status: 'COMPLETED' | 'FAILED'): Promise<LedgerEntry> {
    const { result } = await this.ledger.change(ctx, walletId, async (change) => {
      const entry = await change.findEntry(entryId);
      if (!entry || entry.reason !== 'PURCHASED_CREDIT_INVOICED') throw new NotFoundError(`Invoiced credit ${entryId} not found`, { transaction_id: entryId });
      if (entry.status === status) return entry;
      if (entry.status !== 'PENDING') {
        throw new VersionConflictError(`The invoiced credit is ${entry.status}: it cannot become ${status}`, {
          field: 'status',
          code: 'settled_otherwise',
          transaction_status: entry.status,
        });
      }
      return settle(change, entry, status);
    });
    return result;
  }

  async list(ctx: EventContext, walletId: string, filter: EntryFilter): Promise<{ items: LedgerEntry[]; total: number }> {
    const found = await this.wallets.find(this.db, ctx, walletId, this.ledger.clock());
    if (!found) throw new NotFoundError(`Wallet ${walletId} not found`, { wallet_id: walletId });
    return this.entries.list(this.db, ctx, walletId, filter);
  }
}
