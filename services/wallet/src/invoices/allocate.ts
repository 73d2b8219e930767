import { IdempotencyConflictError } from '@billstream/errors';
import { exactSum } from '@billstream/money';
import type { Trx } from '@billstream/db';
import { failpoint } from '@billstream/runtime';
import type { EventContext } from '@billstream/outbox';
import type { DomainEvent } from '@billstream/contracts';
import type { Decimal } from 'decimal.js';
import { requestHash } from '../entries/idempotency';
import type { WalletChange } from '../ledger/change';
import { debit } from '../ledger/debit';
import { activeWalletsKey, type ActiveWalletIds } from '../wallets/store';
import type { InvoiceDeps } from './deps';
import { debitKeys, type AllocationRequest, type Allocation, type DebitPart, type InvoiceDebit, type InvoiceRecord, type LineApplication } from './domain';
import { allows, creditsFor, minorPerCredit, postpaidDue, prepaidApplications, worthInMinor } from './money';

/** One invoice to allocate: its id and its request. */
export interface InvoiceToAllocate {
  invoiceId: string;
  request: AllocationRequest;
}

/**
 * Allocates the customer's wallets to an invoice, once (ADR 0016): in one database transaction
 * the PRE_PAID wallet applies its credits line by line, the POST_PAID wallet pays what is left
 * on the lines it covers, and the result is stored. A repeated call answers the stored result
 * (voided once the invoice was refunded) and debits nothing. It is a batch of one.
 */
export async function allocateInvoice(deps: InvoiceDeps, ctx: EventContext, invoiceId: string, request: AllocationRequest, dryRun = false): Promise<Allocation> {
  if (dryRun) return estimate(deps, ctx, invoiceId, request);
  const [allocation] = await allocateInvoices(deps, ctx, [{ invoiceId, request }], () => 'lines');
  return allocation;
}

/**
 * Allocates many invoices in ONE database transaction, each exactly as `allocateInvoice` would
 * (ADR 0016, "Batch allocation"): the invoices' locks in key order, one read of their stored
 * allocations (an invoice already allocated answers its stored result; one allocated with
 * another request refuses the whole batch with 409 and nothing is written), one read of the
 * wallets the others pay from, one lock of those wallets, the invoices applied in the given
 * order (invoices of one customer each see the balance the previous one left), one insert of
 * the allocations and one of the debits. The answers follow `items` (invoice ids unique).
 * `conflictField` names the field a 409 points at for the item at an index.
 */
export async function allocateInvoices(
  deps: InvoiceDeps,
  ctx: EventContext,
  items: InvoiceToAllocate[],
  conflictField: (index: number) => string = (i) => `invoices.${i}.lines`,
): Promise<Allocation[]> {
  const hashes = items.map((item) => allocationHash(item.request));
  const { result } = await deps.ledger.transaction(async (trx) => {
    const ids = items.map((item) => item.invoiceId);
    await deps.invoices.lockMany(trx, ctx, ids);
    const stored = await deps.invoices.findMany(trx, ctx, ids);
    const answers = items.map((item, i) => {
      const record = stored.get(item.invoiceId);
      return record && storedAnswer(record, hashes[i], conflictField(i));
    });
    const fresh = items.flatMap((item, i) => (answers[i] ? [] : [{ item, index: i }]));
    if (fresh.length === 0) return { result: answers as Allocation[], events: [] };

    const { result: parts, events } = await applyWallets(deps, trx, ctx, fresh.map((f) => f.item));
    const now = deps.ledger.clock();
    const made: Array<{ allocation: Allocation; requestHash: string }> = [];
    const debits: InvoiceDebit[] = [];
    for (const [n, { item, index }] of fresh.entries()) {
      const { invoiceId } = item;
      const allocation: Allocation = { invoiceId, status: 'allocated', ...parts[n] };
      answers[index] = allocation;
      made.push({ allocation, requestHash: hashes[index] });
      if (allocation.prepaid) debits.push(invoiceDebit(ctx, invoiceId, debitKeys.prepaid(invoiceId), allocation.prepaid, now));
      if (allocation.postpaid) debits.push(invoiceDebit(ctx, invoiceId, debitKeys.postpaid(invoiceId), allocation.postpaid, now));
    }
    await deps.invoices.insertAllocations(trx, ctx, made, now);
    await deps.invoices.insertDebits(trx, debits);
    // Crash point of the exactly-once proofs (ADR 0017): the debits are written, not committed.
    failpoint('wallet.allocate.before-commit');
    return { result: answers as Allocation[], events };
  });
  return result;
}

type AllocationParts = Pick<Allocation, 'prepaid' | 'postpaid'>;

/**
 * For each invoice in the given order, the PRE_PAID wallet's line applications, then the
 * POST_PAID wallet's payment, in `trx`: one read finds the wallets of every (customer, currency),
 * one statement locks them (id order), one read primes their spendable credits, one statement
 * saves them. A wallet paying several invoices is one change: each invoice sees what the
 * previous one left.
 */
async function applyWallets(deps: InvoiceDeps, trx: Trx, ctx: EventContext, items: InvoiceToAllocate[]): Promise<{ result: AllocationParts[]; events: DomainEvent[] }> {
  const active = await deps.wallets.activeIdsOf(trx, ctx, items.map((item) => item.request));
  const walletsOf = items.map((item) => active.get(activeWalletsKey(item.request)) ?? {});
  const walletIds = [...new Set(walletsOf.flatMap((w) => [w.prepaid, w.postpaid].filter((id): id is string => id !== undefined)))];
  return deps.ledger.changeManyIn(
    trx,
    walletIds.map((walletId) => ({ ctx, walletId })),
    async (changes) => {
      // A wallet frozen or closed since it was found takes no part.
      const byId = new Map(changes.flatMap((c) => (c && c.wallet.walletStatus === 'active' ? [[c.wallet.id, c] as const] : [])));
      await primeSpendable(deps, trx, items, walletsOf, byId);
      const parts: AllocationParts[] = [];
      for (const [i, item] of items.entries()) {
        const prepaid = await applyPrepaid(changeOf(byId, walletsOf[i].prepaid), item.invoiceId, item.request);
        const postpaid = await payPostpaid(changeOf(byId, walletsOf[i].postpaid), item.invoiceId, item.request, prepaid?.lines ?? []);
        parts.push({ prepaid, postpaid });
      }
      await dropUnbilled(deps, trx, ctx, items, changes);
      return parts;
    },
  );
}

/**
 * The allocated invoices' usage lines stop counting as unbilled usage (ADR 0024) in the
 * transaction that debits them, before the wallets' alert states are moved: the wallets' rows
 * read with their lock say which invoices they hold, so a batch holding none writes nothing more.
 */
async function dropUnbilled(deps: InvoiceDeps, trx: Trx, ctx: EventContext, items: InvoiceToAllocate[], changes: Array<WalletChange | undefined>): Promise<void> {
  const ids = new Set(items.map((item) => item.invoiceId));
  const dropped: string[] = [];
  const pairs: Array<{ customerId: string; currency: string }> = [];
  for (const change of changes) {
    const w = change?.wallet;
    const held = w ? Object.keys(w.unbilledInvoices).filter((id) => ids.has(id)) : [];
    if (!w || held.length === 0) continue;
    for (const id of held) {
      w.unbilledUsage = w.unbilledUsage.minus(w.unbilledInvoices[id]);
      delete w.unbilledInvoices[id];
      dropped.push(id);
    }
    pairs.push({ customerId: w.customerId, currency: w.currency });
  }
  await deps.unbilled.dropInvoices(trx, ctx, pairs, dropped, deps.ledger.clock());
}

const changeOf = (byId: Map<string, WalletChange>, id: string | undefined) => (id === undefined ? undefined : byId.get(id));

/**
 * Reads the spendable credits of every wallet in one statement before the invoices are applied,
 * enough for what its invoices could take at most (the lines it may pay, capped at its balance),
 * so the debits need no read of their own. Only a read ahead: a debit the read does not cover
 * reads again (`debit`).
 */
async function primeSpendable(
  deps: InvoiceDeps,
  trx: Trx,
  items: InvoiceToAllocate[],
  walletsOf: ActiveWalletIds[],
  byId: Map<string, WalletChange>,
): Promise<void> {
  // Per wallet: the credits that would pay every line it may pay (each invoice in its own minor digits).
  const most = new Map<string, { change: WalletChange; credits: Decimal }>();
  for (const [i, { request }] of items.entries()) {
    for (const id of [walletsOf[i].prepaid, walletsOf[i].postpaid]) {
      const change = changeOf(byId, id);
      if (!change) continue;
      const payable = exactSum(request.lines.filter((l) => allows(change.wallet.allowedPriceTypes, l.priceType)).map((l) => l.amount));
      const credits = creditsFor(payable, minorPerCredit(change.wallet.conversionRate, request.minorDigits), change.wallet.creditBalance);
      const entry = most.get(change.wallet.id);
      if (entry) entry.credits = entry.credits.plus(credits);
      else most.set(change.wallet.id, { change, credits });
    }
  }
  const wants = new Map<string, Decimal>();
  for (const [id, { change, credits }] of most) {
    const capped = credits.greaterThan(change.wallet.creditBalance) ? change.wallet.creditBalance : credits;
    if (capped.greaterThan(0)) wants.set(id, capped);
  }
  if (wants.size === 0) return;
  const now = [...most.values()][0].change.now;
  const { spendable } = await deps.entries.debitReads(trx, [], wants, now);
  for (const id of wants.keys()) byId.get(id)!.primeSpendable(spendable.get(id) ?? []);
}

/** Thrown to roll a dry run back, carrying its answer. */
class DryRun extends Error {
  constructor(readonly allocation: Allocation) {
    super('dry run');
  }
}

/**
 * What an allocation would apply now: the same code in a transaction that is rolled back, so
 * the estimate follows every rule of the real one and leaves no trace (no debit, no event).
 */
async function estimate(deps: InvoiceDeps, ctx: EventContext, invoiceId: string, request: AllocationRequest): Promise<Allocation> {
  try {
    await deps.ledger.transaction(async (trx) => {
      const { result: parts } = await applyWallets(deps, trx, ctx, [{ invoiceId, request }]);
      throw new DryRun({ invoiceId, status: 'allocated', ...parts[0] });
    });
  } catch (err) {
    if (err instanceof DryRun) return err.allocation;
    throw err;
  }
  throw new Error('a dry run must roll back');
}

/** The request's hash, over its wire names (`exponent`): hashes stored by earlier versions keep matching. */
function allocationHash(request: AllocationRequest): string {
  return requestHash({
    op: 'allocation',
    customer_id: request.customerId,
    currency: request.currency,
    exponent: request.minorDigits,
    lines: request.lines.map((l) => [l.id, l.priceType, l.amount.toFixed()]),
  });
}

/** The stored allocation; a request that differs from the one that made it is refused (409). */
function storedAnswer(stored: InvoiceRecord, hash: string, field: string): Allocation {
  const { prepaid = null, postpaid = null } = stored.allocation ?? {};
  if (stored.status === 'allocated' && stored.requestHash !== hash) {
    throw new IdempotencyConflictError('This invoice was already allocated with other lines, customer or currency', {
      field,
      invoice_id: stored.invoiceId,
    });
  }
  return { invoiceId: stored.invoiceId, status: stored.status, prepaid, postpaid };
}

/** The PRE_PAID wallet's applications and their one INVOICE_CREDIT_APPLIED debit; null when it applies nothing. */
async function applyPrepaid(change: WalletChange | undefined, invoiceId: string, request: AllocationRequest): Promise<Allocation['prepaid']> {
  if (!change) return null;
  const { wallet } = change;
  const perCredit = minorPerCredit(wallet.conversionRate, request.minorDigits);
  const lines = prepaidApplications(request.lines, wallet.allowedPriceTypes, worthInMinor(wallet.creditBalance, perCredit));
  const part = await debitFor(change, exactSum(lines.map((l) => l.amount)), perCredit, {
    reason: 'INVOICE_CREDIT_APPLIED',
    description: `Credits applied to invoice ${invoiceId}`,
    idempotencyKey: debitKeys.prepaid(invoiceId),
  });
  return part && { ...part, lines };
}

/** The POST_PAID wallet's INVOICE_PAYMENT of what is left on the lines it covers; null when it pays nothing. */
async function payPostpaid(
  change: WalletChange | undefined,
  invoiceId: string,
  request: AllocationRequest,
  prepaid: LineApplication[],
): Promise<DebitPart | null> {
  if (!change) return null;
  const { wallet } = change;
  const perCredit = minorPerCredit(wallet.conversionRate, request.minorDigits);
  const due = postpaidDue(request.lines, wallet.allowedPriceTypes, prepaid);
  const worth = worthInMinor(wallet.creditBalance, perCredit);
  return debitFor(change, due.lessThan(worth) ? due : worth, perCredit, {
    reason: 'INVOICE_PAYMENT',
    description: `Payment of invoice ${invoiceId}`,
    idempotencyKey: debitKeys.postpaid(invoiceId),
  });
}

/** One debit paying `amount` minor units; nothing when the amount is zero. */
async function debitFor(
  change: WalletChange,
  amount: Decimal,
  perCredit: Decimal,
  entry: { reason: 'INVOICE_CREDIT_APPLIED' | 'INVOICE_PAYMENT'; description: string; idempotencyKey: string },
): Promise<DebitPart | null> {
  if (amount.isZero()) return null;
  const credits = creditsFor(amount, perCredit, change.wallet.creditBalance);
  const written = await debit(change, { credits, ...entry, requestHash: null });
  return { walletId: change.wallet.id, transactionId: written.id, credits, amount };
}

export function invoiceDebit(ctx: EventContext, invoiceId: string, key: string, part: DebitPart, now: Date, requestHash: string | null = null): InvoiceDebit {
  return {
    tenantId: ctx.tenantId,
    environmentId: ctx.environmentId,
    invoiceId,
    key,
    ...part,
    requestHash,
    refundTransactionId: null,
    refundedAt: null,
    refundSkipped: false,
    createdAt: now,
  };
}
