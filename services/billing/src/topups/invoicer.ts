import type { Scope } from '@billstream/contracts';
import type { Db } from '@billstream/db';
import type { Logger } from '@billstream/logger';
import { INVOICE_EVENTS, type Invoice } from '../invoices/domain';
import * as lifecycle from '../invoices/lifecycle';
import type { InvoiceFinalizer } from '../invoices/finalizer';
import { announceInvoice } from '../invoices/maker';
import type { InvoiceStore } from '../invoices/store';
import type { Wallets } from '../clients/wallets/domain';
import { topupInvoice, topupSourceKey } from './topup-invoice';

/** The facts of a pending invoiced credit, as the wallet published them. */
export interface PendingTopup {
  scope: Scope;
  walletId: string;
  transactionId: string;
  credits: string;
}

export interface TopupInvoicerDeps {
  db: Db;
  invoices: InvoiceStore;
  wallets: Wallets;
  finalizer: InvoiceFinalizer;
  logger: Logger;
  clock: () => Date;
  published: () => void;
}

/**
 * Makes the invoice of an invoiced top-up (docs/api/billing.md#invoiced-top-ups), exactly once per
 * wallet transaction: the draft is written with its `invoice.create.drafted` under the unique
 * `source_key` `topup:{transaction id}`, then finalized like any draft (its number from the one
 * counter; finalization never applies credits to a CREDIT_PURCHASE invoice). The wallet is read
 * before the transaction, never inside it. A repeat (a redelivered event, a concurrent consumer)
 * finds the key taken and only finishes what is left: a draft a crash left is finalized here or by
 * the period job.
 */
export class TopupInvoicer {
  constructor(private readonly deps: TopupInvoicerDeps) {}

  /** The top-up's invoice, made and finalized if need be; undefined when it cannot be invoiced (logged). */
  async invoice(topup: PendingTopup, requestId: string): Promise<Invoice | undefined> {
    const { db, invoices } = this.deps;
    const key = topupSourceKey(topup.transactionId);
    const existing = await invoices.getBySourceKey(db, topup.scope, key);
    const invoice = existing ?? (await this.draft(topup, key, requestId));
    if (!invoice) return undefined;
    return this.deps.finalizer.finalize(invoice, requestId, 'system');
  }

  private async draft(topup: PendingTopup, key: string, requestId: string): Promise<Invoice | undefined> {
    const wallet = await this.deps.wallets.wallet(topup.scope, topup.walletId, requestId);
    if (!wallet) {
      this.deps.logger.error('an invoiced top-up names a wallet the wallet service does not know; no invoice made', {
        wallet_id: topup.walletId,
        transaction_id: topup.transactionId,
      });
      return undefined;
    }
    // Settled by a client already, failed by the wallet's termination, or an old event read again
    // (a first start of this consumer reads the topic's retained history): nothing to pay for.
    if (!(await this.deps.wallets.isPendingInvoicedCredit(topup.scope, topup.walletId, topup.transactionId, requestId))) {
      this.deps.logger.info('invoiced top-up no longer pending; no invoice made', { wallet_id: topup.walletId, transaction_id: topup.transactionId });
      return undefined;
    }
    const made = topupInvoice(
      {
        ...topup,
        customerId: wallet.customer_id,
        currency: wallet.currency,
        topupConversionRate: wallet.topup_conversion_rate,
      },
      this.deps.clock(),
    );
    // Its status and money are lifecycle's (ADR 0062): the store inserts only what `draft` returns.
    const { invoice: draft } = lifecycle.draft(made);
    const written = await this.deps.db.transaction(async (trx) => {
      if (!(await this.deps.invoices.insert(trx, draft))) return this.deps.invoices.getBySourceKey(trx, topup.scope, key);
      await announceInvoice(trx, INVOICE_EVENTS.drafted, draft);
      return draft;
    });
    this.deps.published();
    return written;
  }
}
