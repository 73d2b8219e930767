import { IdempotencyConflictError } from '@billstream/errors';
import { exactSum } from '@billstream/money';
import type { Trx } from '@billstream/db';
import { failpoint } from '@billstream/runtime';
import type { EventContext } from '@billstream/outbox';
import type { Decimal } from 'decimal.js';
import { requestHash } from '../entries/idempotency';
import type { WalletChange } from '../ledger/change';
import { debit } from '../ledger/debit';
import type { InvoiceDeps } from './deps';
import { debitKeys, type AllocationRequest, type Allocation, type DebitPart, type InvoiceDebit, type InvoiceRecord, type LineApplication } from './domain';
import { creditsFor, minorPerCredit, postpaidDue, prepaidApplications, worthInMinor } from './money';

/**
 * Allocates the customer's wallets to an invoice, once (ADR 0016): in one database transaction
 * the PRE_PAID wallet applies its credits line by line, the POST_PAID wallet pays what is left
 * on the lines it covers, and the result is stored. A repeated call answers the stored result
 * (voided once the invoice was refunded) and debits nothing.
 */
export async function allocateInvoice(deps: InvoiceDeps, ctx: EventContext, invoiceId: string, request: AllocationRequest, dryRun = false): Promise<Allocation> {
  if (dryRun) return estimate(deps, ctx, invoiceId, request);
  const hash = allocationHash(request);
  const { result } = await deps.ledger.transaction(async (trx) => {
    await deps.invoices.lock(trx, ctx, invoiceId);
    const stored = await deps.invoices.find(trx, ctx, invoiceId);
    if (stored) return { result: storedAnswer(stored, hash), events: [] };

    const { result: parts, events } = await applyWallets(deps, trx, ctx, invoiceId, request);
    const allocation: Allocation = { invoiceId, status: 'allocated', ...parts };
    const now = deps.ledger.clock();
    await deps.invoices.insertAllocation(trx, ctx, allocation, hash, now);
    const debits: InvoiceDebit[] = [];
    if (parts.prepaid) debits.push(invoiceDebit(ctx, invoiceId, debitKeys.prepaid(invoiceId), parts.prepaid, now));
    if (parts.postpaid) debits.push(invoiceDebit(ctx, invoiceId, debitKeys.postpaid(invoiceId), parts.postpaid, now));
    await deps.invoices.insertDebits(trx, debits);
    // Crash point of the exactly-once proofs (ADR 0017): the debits are written, not committed.
    failpoint('wallet.allocate.before-commit');
    return { result: allocation, events };
  });
  return result;
}

/** The PRE_PAID wallet's line applications, then the POST_PAID wallet's payment, in `trx`. */
async function applyWallets(deps: InvoiceDeps, trx: Trx, ctx: EventContext, invoiceId: string, request: AllocationRequest) {
  const walletOf = (walletType: 'PRE_PAID' | 'POST_PAID') =>
    deps.wallets.activeIdOf(trx, ctx, { customerId: request.customerId, currency: request.currency, walletType });
  const [prepaidId, postpaidId] = [await walletOf('PRE_PAID'), await walletOf('POST_PAID')];
  const targets = [prepaidId, postpaidId].flatMap((id) => (id ? [{ ctx, walletId: id }] : []));
  return deps.ledger.changeManyIn(trx, targets, async (changes) => {
    const changeOf = (id: string | undefined) => changes.find((c) => c !== undefined && c.wallet.id === id && c.wallet.walletStatus === 'active');
    const prepaid = await applyPrepaid(changeOf(prepaidId), invoiceId, request);
    const postpaid = await payPostpaid(changeOf(postpaidId), invoiceId, request, prepaid?.lines ?? []);
    return { prepaid, postpaid };
  });
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
      const { result: parts } = await applyWallets(deps, trx, ctx, invoiceId, request);
      throw new DryRun({ invoiceId, status: 'allocated', ...parts });
    });
  } catch (err) {
    if (err instanceof DryRun) return err.allocation;
    throw err;
  }
  throw new Error('a dry run must roll back');
}

function allocationHash(request: AllocationRequest): string {
  return requestHash({
    op: 'allocation',
    customer_id: request.customerId,
    currency: request.currency,
    exponent: request.exponent,
    lines: request.lines.map((l) => [l.id, l.priceType, l.amount.toFixed()]),
  });
}

/** The stored allocation; a request that differs from the one that made it is refused (409). */
function storedAnswer(stored: InvoiceRecord, hash: string): Allocation {
  const { prepaid = null, postpaid = null } = stored.allocation ?? {};
  if (stored.status === 'allocated' && stored.requestHash !== hash) {
    throw new IdempotencyConflictError('This invoice was already allocated with other lines, customer or currency', {
      field: 'lines',
      invoice_id: stored.invoiceId,
    });
  }
  return { invoiceId: stored.invoiceId, status: stored.status, prepaid, postpaid };
}

/** The PRE_PAID wallet's applications and their one INVOICE_CREDIT_APPLIED debit; null when it applies nothing. */
async function applyPrepaid(change: WalletChange | undefined, invoiceId: string, request: AllocationRequest): Promise<Allocation['prepaid']> {
  if (!change) return null;
  const { wallet } = change;
  const perCredit = minorPerCredit(wallet.conversionRate, request.exponent);
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
  const perCredit = minorPerCredit(wallet.conversionRate, request.exponent);
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
