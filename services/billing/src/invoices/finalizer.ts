/** One file: finalizing one draft, a batch of drafts and a void share the steps that record them (credits, number, save, events, documents) and their lock order (ADR 0016); split, each half would reach into the other. */
import { TOPICS } from '@billstream/bus';
import type { DomainEvent, Scope } from '@billstream/contracts';
import { minorDigits } from '@billstream/contracts';
import type { Db, Trx } from '@billstream/db';
import { NotFoundError, ServiceUnavailableError, ValidationError } from '@billstream/errors';
import type { Logger } from '@billstream/logger';
import { outboxInsertMany } from '@billstream/outbox';
import { failpoint } from '@billstream/runtime';
import type { Allocation, AllocationRequest, Wallets } from '../clients/wallets/domain';
import { netLines, type Invoice } from './domain';
import { invoiceEvent } from './maker';
import type { FinalizationSteps } from './finalization-steps';
import * as lifecycle from './lifecycle';
import type { PostpaidPayment } from './postpaid-recorder';
import type { VoidCreditNote } from './void-credit-note';
import type { InvoiceStore } from './store';

export function invoiceNotFound(id: string, field = 'id'): NotFoundError {
  return new NotFoundError(`Invoice ${id} not found`, { field, invoice_id: id });
}

export interface FinalizerDeps {
  db: Db;
  invoices: InvoiceStore;
  wallets: Wallets;
  logger: Logger;
  clock: () => Date;
  published: () => void;
  invoiceNumberPrefix: string;
  /** What finalization does besides the invoice's transition, in order (`workflows/finalize-invoice.ts`, ADR 0062). */
  steps: FinalizationSteps;
  /** The INVOICE_VOID credit note of a finalized invoice's void (ADR 0041). */
  voidNote: VoidCreditNote;
}

/** `{prefix}-{YYYYMM, UTC}-{n, 5 digits at least}`. */
export function invoiceNumber(prefix: string, at: Date, n: number): string {
  const month = `${at.getUTCFullYear()}${String(at.getUTCMonth() + 1).padStart(2, '0')}`;
  return `${prefix}-${month}-${String(n).padStart(5, '0')}`;
}

/**
 * Finalizes and voids invoices (ADR 0016). Finalization asks the wallet service to allocate
 * credits to the invoice (one wallet transaction, idempotent on the invoice id), then records
 * the allocation, the number and the totals in one billing transaction. Every step is safe to
 * repeat: a retry, a concurrent call or a restart after a crash gets the same allocation.
 */
export class InvoiceFinalizer {
  constructor(private readonly deps: FinalizerDeps) {}

  async get(scope: Scope, id: string): Promise<Invoice> {
    const found = await this.deps.invoices.get(this.deps.db, scope, id);
    if (!found) throw invoiceNotFound(id);
    return found;
  }

  /** POST /v1/invoices/{id}/finalize: a draft only; anything else is 400. */
  async finalizeNow(scope: Scope, id: string, requestId: string): Promise<Invoice> {
    const draft = await this.get(scope, id);
    if (draft.status !== 'draft') throw notDraft(draft);
    const { invoice, wrote } = await this.run(draft, requestId, 'api');
    // Its tax provider failed (docs/api/taxes.md#http-provider): it stays a draft, never finalized untaxed.
    if (!wrote && invoice.status === 'draft' && invoice.taxStatus === 'failed') throw taxFailed(invoice);
    // Another call finalized (or voided) it first: this one did not finalize a draft.
    if (!wrote) throw notDraft(invoice);
    return invoice;
  }

  /**
   * Finalizes a draft (the period job's path: an invoice no longer a draft is answered as it
   * is). `actor` names who asked, for the events.
   */
  async finalize(draft: Invoice, requestId: string, actor: string): Promise<Invoice> {
    return (await this.run(draft, requestId, actor)).invoice;
  }

  /** The invoice after the attempt, and whether this call finalized it. */
  private async run(draft: Invoice, requestId: string, actor: string): Promise<{ invoice: Invoice; wrote: boolean }> {
    let current = draft;
    if (current.status !== 'draft') return { invoice: current, wrote: false };
    if (!current.frozenAt && this.deps.steps.reprices) {
      const frozen = await this.deps.steps.reprice(current, requestId);
      if (!frozen) return { invoice: (await this.deps.invoices.getById(this.deps.db, draft.id))!, wrote: false };
      current = frozen;
    }
    const [taxed] = await this.deps.steps.tax([current]);
    if (!taxed) return { invoice: (await this.deps.invoices.getById(this.deps.db, draft.id))!, wrote: false };
    current = taxed;
    // Crash points of the exactly-once proofs (ADR 0017); nothing unless BILLSTREAM_FAILPOINTS names them.
    failpoint('finalize.before-allocation');
    const allocation = await this.allocate(current, requestId);
    failpoint('finalize.after-allocation');
    const { invoice, wrote } = await this.deps.db.transaction(async (trx) => {
      // The row only: an unchanged version means unchanged lines (only a reprice changes them,
      // and it bumps the version), so the lines read before are the ones to record.
      const row = await this.deps.invoices.lockRow(trx, current.id);
      if (!row) throw invoiceNotFound(current.id);
      // Finalized by a concurrent call, or voided: the wallet refunds whatever this call's
      // allocation took when the void's refund runs (it serializes with the allocation there).
      if (row.status !== 'draft') return { invoice: (await this.deps.invoices.getById(trx, current.id))!, wrote: false };
      if (allocation?.status === 'voided') throw new ServiceUnavailableError(`Invoice ${row.id} is being voided; retry later`);
      if (row.version !== current.version) throw new ServiceUnavailableError(`Invoice ${row.id} changed while it was finalized; retry`);
      const recorded = await this.record(trx, { ...row, lines: current.lines, discounts: current.discounts }, allocation, actor);
      failpoint('finalize.before-commit');
      return { invoice: recorded, wrote: true };
    });
    if (wrote) {
      this.deps.published();
      await this.deps.steps.afterCommit(invoice, requestId);
    }
    return { invoice, wrote };
  }

  private allocate(i: Invoice, requestId: string): Promise<Allocation | undefined> {
    // CREDIT_PURCHASE invoices are never paid with credits; an invoice of nothing needs none.
    if (i.billingReason === 'CREDIT_PURCHASE' || i.subtotal === 0) return Promise.resolve(undefined);
    return this.deps.wallets.allocate(i, i.id, allocationRequest(i), requestId);
  }

  /**
   * Numbers the invoice, records what the wallets paid, and writes its events. What needs no
   * number (the lines' credits, the CREDITS payment row) is written first: the number's row
   * lock (invoice_counters) orders every finalization of the tenant, so it is taken last and
   * held only for the invoice's update, one insert of its events and the commit.
   */
  private async record(trx: Trx, draft: Invoice, allocation: Allocation | undefined, actor: string): Promise<Invoice> {
    const prepared = await this.prepare(trx, draft, allocation, actor);
    const n = await this.deps.invoices.nextNumbers(trx, draft, 1);
    // Read after the number's lock: numbers increase with finalized_at.
    return this.complete(trx, prepared, n, this.deps.clock(), actor);
  }

  /** What needs no number: the lines' credits and the CREDITS payment, checked and written. */
  private async prepare(trx: Trx, draft: Invoice, allocation: Allocation | undefined, actor: string): Promise<Prepared> {
    const prepared = this.preparedOf(draft, allocation);
    await this.writePrepared(trx, [prepared], actor);
    return prepared;
  }

  /**
   * The draft with the allocation's credits on its lines and what a postpaid wallet paid
   * (`lifecycle.allocate`: a line takes at most its net amount, the payment at most what is due).
   */
  private preparedOf(draft: Invoice, allocation: Allocation | undefined): Prepared {
    const credits = new Map((allocation?.prepaid?.lines ?? []).map((l) => [l.id, l.amount]));
    const { invoice } = lifecycle.allocate(draft, credits, allocation?.postpaid?.amount ?? 0);
    const postpaid =
      allocation?.postpaid && allocation.postpaid.amount > 0
        ? { walletId: allocation.postpaid.wallet_id, transactionId: allocation.postpaid.transaction_id, amount: allocation.postpaid.amount, at: this.deps.clock() }
        : undefined;
    return { allocated: invoice, postpaid };
  }

  /** The lines' credits of all (one statement) and their CREDITS payments (each answers its event). */
  private async writePrepared(trx: Trx, prepared: Prepared[], actor: string): Promise<void> {
    await this.deps.invoices.updateApplied(
      trx,
      prepared.map((p) => p.allocated),
    );
    for (const p of prepared) if (p.postpaid) p.paymentEvents = await this.deps.steps.postpaid.record(trx, p.allocated, p.postpaid, actor);
  }

  /** Saves the numbered invoice and writes its events (after the number's lock). */
  private async complete(trx: Trx, prepared: Prepared, n: number, now: Date, actor: string): Promise<Invoice> {
    const finalized = await this.numbered(prepared, n, now);
    const [saved] = await this.saveNumbered(trx, [finalized.invoice]);
    await outboxInsertMany(trx, TOPICS.billingEvents, eventsOf(saved!, finalized.events, prepared.paymentEvents, actor));
    if (saved!.status === 'paid') await this.deps.steps.paidInTransaction(trx, saved!);
    return saved!;
  }

  /** The finalized invoice a prepared draft becomes with number `n` (`lifecycle.finalize`; nothing written). */
  private async numbered({ allocated }: Prepared, n: number, now: Date): Promise<lifecycle.Transition> {
    // The links last DOCUMENT_LINK_TTL_DAYS_AFTER_DUE days after this due date (ADR 0059).
    const links = await this.deps.steps.documents.links({ ...allocated, dueDate: lifecycle.dueDateOf(allocated, now) });
    return lifecycle.finalize(allocated, { invoiceNumber: invoiceNumber(this.deps.invoiceNumberPrefix, now, n), now, links });
  }

  /**
   * Saves numbered invoices of one tenant and environment and snapshots their documents, in a
   * fixed number of statements whatever their count (the number's lock is held meanwhile).
   * Answers them saved, in the order given.
   */
  private async saveNumbered(trx: Trx, numbered: lifecycle.OwnedInvoice[]): Promise<Invoice[]> {
    const saved = await this.deps.invoices.saveMany(trx, numbered);
    await this.deps.steps.documents.inTransaction(trx, saved);
    return saved;
  }

  /**
   * Finalizes a batch of drafts (the period job): the wallet allocates them with one call per
   * tenant and environment (one wallet transaction, each invoice once), then one billing
   * transaction per chunk locks them, records their credits, takes their numbers at once (the
   * number's lock is held once per chunk, not once per invoice) and saves them. Drafts that must
   * be repriced first, that changed meanwhile, or whose chunk failed go through `finalize` one by
   * one. Answers each id's outcome: finalized by this call, not (any more) a draft, or an error.
   */
  async finalizeMany(ids: string[], requestId: string, actor: string): Promise<Map<string, { finalized: boolean } | { error: unknown }>> {
    const out = new Map<string, { finalized: boolean } | { error: unknown }>(ids.map((id) => [id, { finalized: false }]));
    const all = (await this.deps.invoices.getByIds(this.deps.db, ids)).filter((d) => d.status === 'draft');
    // Drafts to reprice first go on their own (`run` taxes them after the reprice): taxed once, not twice.
    const alone = all.filter((d) => !d.frozenAt && this.deps.steps.reprices);
    const drafts = await this.deps.steps.tax(all.filter((d) => !alone.includes(d)));
    const byScope = new Map<string, Invoice[]>();
    for (const d of drafts) {
      const key = JSON.stringify([d.tenantId, d.environmentId]);
      byScope.set(key, [...(byScope.get(key) ?? []), d]);
    }
    for (const group of byScope.values()) {
      for (let at = 0; at < group.length; at += FINALIZE_CHUNK) {
        const chunk = group.slice(at, at + FINALIZE_CHUNK);
        try {
          const done = await this.finalizeChunk(chunk, requestId, actor);
          for (const d of chunk) {
            if (done.has(d.id)) out.set(d.id, { finalized: true });
            else alone.push(d);
          }
        } catch (error) {
          // The wallet could not allocate (down, say): each draft is retried when its claim
          // expires, not one by one against the same outage. Anything else: each on its own.
          if (error instanceof AllocationFailed) for (const d of chunk) out.set(d.id, { error: error.reason });
          else alone.push(...chunk);
        }
      }
    }
    const worker = async () => {
      for (let d = alone.shift(); d !== undefined; d = alone.shift()) {
        try {
          const current = (await this.deps.invoices.getById(this.deps.db, d.id)) ?? d;
          const { wrote } = await this.run(current, requestId, actor);
          out.set(d.id, { finalized: wrote });
        } catch (error) {
          out.set(d.id, { error });
        }
      }
    };
    await Promise.all([worker(), worker(), worker(), worker()]);
    return out;
  }

  /** One chunk of one tenant and environment; answers the ids it finalized (the others are left as they are). */
  private async finalizeChunk(chunk: Invoice[], requestId: string, actor: string): Promise<Set<string>> {
    const scope = chunk[0]!;
    failpoint('finalize.before-allocation');
    const needing = chunk.filter((i) => i.billingReason !== 'CREDIT_PURCHASE' && i.subtotal !== 0);
    const allocations = new Map<string, Allocation>();
    if (needing.length > 0) {
      const answers = await this.deps.wallets
        .allocateMany(
          scope,
          needing.map((i) => ({ invoiceId: i.id, request: allocationRequest(i) })),
          requestId,
        )
        .catch((cause: unknown) => {
          // A refusal (4xx) names one invoice of the batch: each goes on its own, so only that one fails.
          throw cause instanceof ServiceUnavailableError ? new AllocationFailed(cause) : cause;
        });
      answers.forEach((a, k) => allocations.set(needing[k]!.id, a));
    }
    failpoint('finalize.after-allocation');
    const saved = await this.deps.db.transaction(async (trx) => {
      const rows = await this.deps.invoices.lockRows(
        trx,
        chunk.map((i) => i.id),
      );
      const byId = new Map(chunk.map((i) => [i.id, i]));
      const prepared: Prepared[] = [];
      for (const row of rows) {
        const current = byId.get(row.id)!;
        const allocation = allocations.get(row.id);
        // Not a draft any more, being voided, or changed: left to `finalize` on its own.
        if (row.status !== 'draft' || allocation?.status === 'voided' || row.version !== current.version) continue;
        prepared.push(this.preparedOf({ ...row, lines: current.lines, discounts: current.discounts }, allocation));
      }
      if (prepared.length === 0) return [];
      await this.writePrepared(trx, prepared, actor);
      const first = await this.deps.invoices.nextNumbers(trx, scope, prepared.length);
      // Read after the number's lock: numbers increase with finalized_at.
      const now = this.deps.clock();
      const finalized = await Promise.all(prepared.map((p, k) => this.numbered(p, first + k, now)));
      const out = await this.saveNumbered(
        trx,
        finalized.map((f) => f.invoice),
      );
      // Every event of the chunk in one statement, in each invoice's order.
      await outboxInsertMany(
        trx,
        TOPICS.billingEvents,
        out.flatMap((saved, k) => eventsOf(saved, finalized[k]!.events, prepared[k]!.paymentEvents, actor)),
      );
      for (const saved of out) if (saved.status === 'paid') await this.deps.steps.paidInTransaction(trx, saved);
      failpoint('finalize.before-commit');
      return out;
    });
    if (saved.length > 0) this.deps.published();
    for (const invoice of saved) await this.deps.steps.afterCommit(invoice, requestId);
    return new Set(saved.map((i) => i.id));
  }

  /** POST /v1/invoices/{id}/void: draft or finalized; the credits it took go back once. */
  async void(scope: Scope, id: string, requestId: string, actor: string): Promise<Invoice> {
    const voided = await this.deps.db.transaction(async (trx) => {
      const locked = await this.deps.invoices.getForUpdate(trx, id);
      if (!locked || locked.tenantId !== scope.tenantId || locked.environmentId !== scope.environmentId) throw invoiceNotFound(id);
      lifecycle.assertCan('void', locked);
      const note = locked.status === 'finalized' ? await this.deps.voidNote.onVoid(trx, locked, actor) : null;
      const t = lifecycle.voidInvoice(locked, this.deps.clock(), note);
      return this.saveAnnounced(trx, t, actor);
    });
    this.deps.published();
    try {
      return await this.completeVoid(voided, requestId);
    } catch (err) {
      this.deps.logger.warn('invoice voided; giving its credits back failed and will be retried by the period job', { err, invoice_id: id });
      return voided;
    }
  }

  /**
   * Gives back what a voided invoice took: the wallet refunds every debit of the invoice once
   * and tombstones it; a voided invoiced top-up fails its pending credit. Safe to repeat.
   */
  async completeVoid(voided: Invoice, requestId: string): Promise<Invoice> {
    if (voided.refundState !== 'pending') return voided;
    if (voided.billingReason === 'CREDIT_PURCHASE' && voided.source) {
      await this.deps.wallets.settle(voided, voided.source.wallet_id, voided.source.transaction_id, 'FAILED', requestId);
    }
    await this.deps.wallets.refund(voided, voided.id, requestId);
    return this.deps.db.transaction(async (trx) => {
      const locked = (await this.deps.invoices.getForUpdate(trx, voided.id))!;
      if (locked.refundState !== 'pending') return locked;
      await this.deps.voidNote.refunded(trx, locked);
      return this.deps.invoices.save(trx, lifecycle.refunded(locked, this.deps.clock()).invoice);
    });
  }

  /** Saves a transition's invoice and writes its events with the invoice as saved. */
  private async saveAnnounced(trx: Trx, t: lifecycle.Transition, actor: string): Promise<Invoice> {
    const saved = await this.deps.invoices.save(trx, t.invoice);
    await outboxInsertMany(
      trx,
      TOPICS.billingEvents,
      t.events.map((type) => ({ key: saved.id, event: invoiceEvent(type, saved, actor) })),
    );
    return saved;
  }

  /** The period job: marks a finalized invoice past its due date overdue, once, with its event. */
  async markOverdue(id: string): Promise<boolean> {
    const marked = await this.deps.db.transaction(async (trx) => {
      const locked = await this.deps.invoices.getForUpdate(trx, id);
      const now = this.deps.clock();
      if (!locked || !lifecycle.isOverdue(locked, now)) {
        if (locked) await this.deps.invoices.releaseLease(trx, id);
        return false;
      }
      await this.saveAnnounced(trx, lifecycle.markOverdue(locked, now), 'system');
      return true;
    });
    if (marked) this.deps.published();
    return marked;
  }
}

/** The wallet service could not allocate a batch now (down, or a 5xx). */
class AllocationFailed extends Error {
  constructor(readonly reason: unknown) {
    super('the wallet service could not allocate the batch');
  }
}

/** Drafts finalized per billing transaction by `finalizeMany`. */
const FINALIZE_CHUNK = 100;

interface Prepared {
  /** The draft with its credits and totals (`lifecycle.allocate`). */
  allocated: lifecycle.OwnedInvoice;
  postpaid: PostpaidPayment | undefined;
  /** The postpaid payment's event, once it is written. */
  paymentEvents?: DomainEvent[];
}

function allocationRequest(i: Invoice): AllocationRequest {
  return {
    customer_id: i.customerId,
    currency: i.currency,
    exponent: minorDigits(i.currency),
    lines: netLines(i),
  };
}

/**
 * A finalized invoice's events, keyed by its id, in this order: finalized (the transition's
 * first), then its postpaid payment's, then the payment update (the transition's second).
 */
function eventsOf(saved: Invoice, types: lifecycle.Transition['events'], paymentEvents: DomainEvent[] | undefined, actor: string): Array<{ key: string; event: DomainEvent }> {
  const [first, ...rest] = types.map((t) => invoiceEvent(t, saved, actor));
  const events: DomainEvent[] = [first!, ...(paymentEvents ?? []), ...rest];
  return events.map((event) => ({ key: saved.id, event }));
}

/**
 * The refusal of a draft its HTTP tax provider could not tax now: an operation the invoice's
 * state does not allow, so a 400 `validation_error` (the envelope's codes are closed), with
 * `details.tax_status` saying why (docs/api/taxes.md#http-provider).
 */
function taxFailed(i: Invoice): ValidationError {
  return new ValidationError(`Invoice ${i.id} could not be taxed: its tax provider failed (timeout, refused, not a 2xx, or a bad answer); it stays a draft with tax_status failed, the period job retries it, and a finalize once the provider answers finalizes it`, {
    field: 'tax_status',
    tax_status: 'failed',
    invoice_id: i.id,
  });
}

/** The 400 of a finalization that found no draft (another call finalized or voided it first). */
function notDraft(i: Invoice): ValidationError {
  return lifecycle.refusalOf('finalize', i) ?? new ValidationError(`Invoice ${i.id} was not finalized by this call`, { field: 'status', status: i.status, invoice_id: i.id });
}
