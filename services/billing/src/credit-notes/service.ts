import { createHash } from 'node:crypto';
import type { Scope } from '@billstream/contracts';
import { minorDigits } from '@billstream/contracts';
import type { Db, Trx } from '@billstream/db';
import { IdempotencyConflictError, NotFoundError, ValidationError } from '@billstream/errors';
import type { Logger } from '@billstream/logger';
import { exact, toDecimalString } from '@billstream/money';
import { failpoint } from '@billstream/runtime';
import type { WalletCredits } from '../clients/wallets/domain';
import type { Invoice } from '../invoices/domain';
import * as lifecycle from '../invoices/lifecycle';
import { announceInvoice } from '../invoices/maker';
import type { InvoiceStore } from '../invoices/store';
import { CREDIT_NOTE_EVENTS, walletCreditOf, type CreditNote, type CreditNoteListQuery, type NewCreditNote } from './domain';
import { noteMoney, type CreditNoteIssuer } from './issuer';
import { noteTax, requestedLines, splitAmount } from './money';
import { announceCreditNote, type CreditNoteStore } from './store';

export interface CreditNoteDeps {
  db: Db;
  notes: CreditNoteStore;
  invoices: InvoiceStore;
  issuer: CreditNoteIssuer;
  wallets: WalletCredits;
  logger: Logger;
  clock: () => Date;
  published: () => void;
}

type Ctx = Scope & { actor: string; requestId: string };

export function creditNoteNotFound(id: string): NotFoundError {
  return new NotFoundError(`Credit note ${id} not found`, { field: 'id', credit_note_id: id });
}

/**
 * What a retry must repeat: the note but its key, canonical. Its form (the request's field names)
 * is the one stored before the mapping of ADR 0063, so a retry across that deploy computes the
 * hash it stored.
 */
function requestHash(asked: NewCreditNote): string {
  const canonical = {
    invoice_id: asked.invoiceId,
    reason: asked.reason,
    memo: asked.memo ?? null,
    lines: asked.lines?.map((l) => ({ invoice_line_item_id: l.invoiceLineItemId, amount: l.amount })) ?? null,
    amount: asked.amount ?? null,
    refund: asked.refund ?? 'NONE',
    metadata: Object.fromEntries(Object.entries(asked.metadata ?? {}).sort(([a], [b]) => a.localeCompare(b))),
  };
  return createHash('sha256').update(JSON.stringify(canonical)).digest('hex');
}

/** The same idempotency key was inserted by a concurrent call: this transaction rolls back (its number with it). */
class KeyTaken extends Error {}

/**
 * Credit notes (docs/api/credit-notes.md, ADR 0041). A note is written under the invoice's row
 * lock with its number (gap-free, taken last), the lines' `credited_amount` and the invoice's
 * totals, in one transaction; what goes back to a wallet is credited after the commit, by key
 * `credit_note:{id}` (the wallet credits a key once), and marked `succeeded`; a wallet service
 * down leaves `refund_status: pending` for the period job.
 */
export class CreditNoteService {
  constructor(private readonly deps: CreditNoteDeps) {}

  async create(ctx: Ctx, asked: NewCreditNote): Promise<CreditNote> {
    const hash = requestHash(asked);
    if (asked.idempotencyKey) {
      const earlier = await this.deps.notes.getByIdempotencyKey(this.deps.db, ctx, asked.idempotencyKey);
      if (earlier) return this.replay(earlier, hash, ctx.requestId);
    }
    let note: CreditNote;
    try {
      note = await this.deps.db.transaction(async (trx) => {
        const invoice = await this.creditable(trx, ctx, asked.invoiceId);
        const lines = requestedLines(invoice, asked);
        // The money order works on the note's total: its lines' amounts and the tax they return (docs/api/taxes.md#arithmetic).
        const split = splitAmount(noteTax(invoice, lines).total, await this.deps.issuer.moneyOf(trx, invoice), asked.refund ?? 'NONE');
        const issued = await this.deps.issuer.issue(trx, ctx, invoice, {
          reason: asked.reason,
          memo: asked.memo ?? null,
          refund: asked.refund ?? 'NONE',
          origin: 'MANUAL',
          idempotencyKey: asked.idempotencyKey ?? null,
          requestHash: hash,
          metadata: asked.metadata ?? {},
          lines,
          ...split,
        });
        if (!issued) throw new KeyTaken();
        return issued.note;
      });
    } catch (err) {
      if (!(err instanceof KeyTaken)) throw err;
      const earlier = await this.deps.notes.getByIdempotencyKey(this.deps.db, ctx, asked.idempotencyKey!);
      return this.replay(earlier!, hash, ctx.requestId);
    }
    this.deps.published();
    return this.creditWallet(note, ctx.requestId);
  }

  private async replay(earlier: CreditNote, hash: string, requestId: string): Promise<CreditNote> {
    if (earlier.requestHash !== hash) {
      throw new IdempotencyConflictError('This idempotency_key was already used with another credit note', { field: 'idempotency_key', credit_note_id: earlier.id });
    }
    return this.creditWallet(earlier, requestId);
  }

  /** The invoice, locked, if notes can be issued on it (finalized or paid, not a purchase of credits). */
  private async creditable(trx: Trx, scope: Scope, invoiceId: string): Promise<Invoice> {
    const invoice = await this.deps.invoices.getForUpdate(trx, invoiceId);
    if (!invoice || invoice.tenantId !== scope.tenantId || invoice.environmentId !== scope.environmentId) {
      throw new NotFoundError(`Invoice ${invoiceId} not found`, { field: 'invoice_id', invoice_id: invoiceId });
    }
    lifecycle.assertCan('credit', invoice);
    return invoice;
  }

  /**
   * Credits the customer's PRE_PAID wallet with what the note gives back to wallets (reason
   * CREDIT_NOTE, no expiry, created with rate "1" and ALL price types if missing), once per
   * note whatever the number of calls (key `credit_note:{id}`), then marks the note. A wallet
   * service down or a refusal leaves it pending (logged) for the period job; answers the note as it is.
   */
  async creditWallet(note: CreditNote, requestId: string): Promise<CreditNote> {
    if (note.refundStatus !== 'pending' || note.origin !== 'MANUAL') return note;
    const amount = walletCreditOf(note);
    try {
      const outcome = await this.deps.wallets.credit(
        note,
        {
          customer_id: note.customerId,
          currency: note.currency,
          amount: toDecimalString(exact(amount).div(exact(10).pow(minorDigits(note.currency)))),
          transaction_reason: 'CREDIT_NOTE',
          expiry_date: null,
          priority: null,
          description: `Credit note ${note.number}`,
          idempotency_key: `credit_note:${note.id}`,
          wallet: { conversion_rate: '1', allowed_price_types: ['ALL'] },
        },
        requestId,
      );
      // Crash point of the exactly-once proof (ADR 0017): the wallet credited, billing has not recorded it.
      failpoint('credit-notes.after-credit');
      if (outcome.kind === 'refused') {
        this.deps.logger.warn('credit note: the wallet refused the credit; it stays pending', { credit_note_id: note.id, reason: outcome.reason });
        await this.deps.notes.touchPending(this.deps.db, note.id, this.deps.clock());
        return note;
      }
      const marked = await this.deps.db.transaction(async (trx) => {
        const locked = (await this.deps.notes.getForUpdate(trx, note.id))!;
        if (locked.refundStatus !== 'pending') return locked;
        const saved = await this.deps.notes.save(trx, { ...locked, refundStatus: 'succeeded', walletTransactionId: outcome.transactionId, updatedAt: this.deps.clock() });
        await announceCreditNote(trx, CREDIT_NOTE_EVENTS.updated, saved);
        return saved;
      });
      this.deps.published();
      return marked;
    } catch (err) {
      this.deps.logger.warn('credit note: the wallet did not take the credit now; the period job retries it', { err, credit_note_id: note.id });
      await this.deps.notes.touchPending(this.deps.db, note.id, this.deps.clock()).catch(() => undefined);
      return note;
    }
  }

  /** The period job: credits the wallets of notes left pending (an outage, a crash); answers how many succeeded. */
  async retryPending(requestId: string, scope?: Scope): Promise<number> {
    let done = 0;
    for (const id of await this.deps.notes.pendingRefundIds(this.deps.db, 100, scope)) {
      const note = await this.deps.notes.getById(this.deps.db, id);
      if (note && (await this.creditWallet(note, requestId)).refundStatus === 'succeeded') done += 1;
    }
    return done;
  }

  async get(scope: Scope, id: string): Promise<CreditNote> {
    const found = await this.deps.notes.get(this.deps.db, scope, id);
    if (!found) throw creditNoteNotFound(id);
    return found;
  }

  list(scope: Scope, q: CreditNoteListQuery) {
    return this.deps.notes.list(this.deps.db, scope, q);
  }

  /**
   * Voids a note that gave no money back (its wallet and refund parts 0, else 400 `status`):
   * what it took off is due again (`paid` → `finalized`), and its lines can be credited again.
   */
  async void(ctx: Ctx, id: string): Promise<CreditNote> {
    const found = await this.get(ctx, id);
    const voided = await this.deps.db.transaction(async (trx) => {
      // The invoice first, as on issue: one lock order.
      const invoice = (await this.deps.invoices.getForUpdate(trx, found.invoiceId))!;
      const note = (await this.deps.notes.getForUpdate(trx, id))!;
      if (note.status !== 'issued') {
        throw new ValidationError(`Credit note ${id} is already void`, { field: 'status', status: note.status });
      }
      if (note.walletAmount + note.refundAmount > 0) {
        throw new ValidationError(`Credit note ${id} gave money back: it cannot be voided`, {
          field: 'status',
          wallet_amount: note.walletAmount,
          refund_amount: note.refundAmount,
        });
      }
      const now = this.deps.clock();
      const t = lifecycle.removeCreditNote(invoice, noteMoney(note), now);
      await this.deps.notes.addCredited(trx, note.lines, -1);
      const saved = await this.deps.invoices.save(trx, t.invoice);
      const out = await this.deps.notes.save(trx, { ...note, status: 'void', voidedAt: now, updatedAt: now });
      await announceCreditNote(trx, CREDIT_NOTE_EVENTS.updated, out, ctx.actor);
      for (const type of t.events) await announceInvoice(trx, type, saved, ctx.actor);
      return out;
    });
    this.deps.published();
    return voided;
  }
}
