import type { Db, Trx } from '@billstream/db';
import { DomainError } from '@billstream/errors';
import type { Logger } from '@billstream/logger';
import type { Invoice } from '../invoices/domain';
import type { PaidHook } from '../invoices/paid-hook';
import type { InvoiceStore } from '../invoices/store';
import type { Wallets } from '../clients/wallets/domain';

export interface TopupSettlementDeps {
  db: Db;
  invoices: InvoiceStore;
  wallets: Wallets;
  logger: Logger;
}

/**
 * Paying an invoiced top-up in full settles its pending wallet credit COMPLETED, exactly once:
 * the paying transaction marks the invoice `settle_state = pending`; after the commit the wallet
 * is asked to settle on its internal route (a repeat is harmless: the credit already COMPLETED
 * answers 200) and the invoice is marked `done`. A credit the wallet settled otherwise (FAILED by
 * a termination; clients cannot settle it, ADR 0056) is refused with 409: a failure, logged as an
 * error, the mark kept, never taken as done. A crash or a wallet outage in between leaves the mark,
 * which the period job claims and settles. Voiding settles FAILED instead
 * (InvoiceFinalizer.completeVoid); a paid invoice cannot be voided, so the two never meet.
 */
export class TopupSettlement implements PaidHook {
  private readonly db: Db;
  private readonly invoices: InvoiceStore;
  private readonly wallets: Wallets;
  private readonly logger: Logger;

  constructor(deps: TopupSettlementDeps) {
    ({ db: this.db, invoices: this.invoices, wallets: this.wallets, logger: this.logger } = deps);
  }

  async inTransaction(trx: Trx, invoice: Invoice): Promise<void> {
    if (isTopup(invoice)) await this.invoices.markSettlePending(trx, invoice.id);
  }

  async afterCommit(invoice: Invoice, requestId: string): Promise<void> {
    if (!isTopup(invoice)) return;
    try {
      await this.settle(invoice.id, requestId);
    } catch (err) {
      settleFailed(this.logger, err, invoice.id);
    }
  }

  /** Settles the credit of an invoice marked pending (the period job's retry too); true when it did. */
  async settle(invoiceId: string, requestId: string): Promise<boolean> {
    const invoice = await this.invoices.getById(this.db, invoiceId);
    if (!invoice || invoice.settleState !== 'pending' || !invoice.source) {
      if (invoice) await this.invoices.releaseLease(this.db, invoiceId);
      return false;
    }
    await this.wallets.settle(invoice, invoice.source.wallet_id, invoice.source.transaction_id, 'COMPLETED', requestId);
    await this.invoices.markSettled(this.db, invoiceId);
    return true;
  }
}

/** A refusal (4xx) needs a person: logged as an error; anything else is an outage the period job retries. */
export function settleFailed(logger: Logger, err: unknown, invoiceId: string): void {
  if (err instanceof DomainError && (err.kind === 'validation' || err.kind === 'not_found')) {
    logger.error('invoiced top-up paid; the wallet refused to complete its credit: the credit is not given, the invoice stays marked to settle', { err, invoice_id: invoiceId });
  } else {
    logger.warn('invoiced top-up paid; settling its credit failed and will be retried by the period job', { err, invoice_id: invoiceId });
  }
}

function isTopup(i: Invoice): boolean {
  return i.billingReason === 'CREDIT_PURCHASE' && i.source !== null;
}
