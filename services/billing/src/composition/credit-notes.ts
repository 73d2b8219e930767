/**
 * Credit notes' composition (ADR 0041): the issuer writes them under the invoice's lock; what goes
 * back to a wallet is credited by key `credit_note:{id}`. A fallen SUM's threshold returns (ADR
 * 0046) are credit notes too.
 */
import type { WalletCredits } from '../clients/wallets/domain';
import { CreditNoteIssuer } from '../credit-notes/issuer';
import { CreditNoteService } from '../credit-notes/service';
import { ThresholdReturnNotes } from '../credit-notes/threshold-returns';
import type { CompositionBase } from './base';
import type { BillingStores } from './stores';

export interface CreditNotes {
  issuer: CreditNoteIssuer;
  service: CreditNoteService;
  thresholdReturns: ThresholdReturnNotes;
}

export function composeCreditNotes({ db, logger, clock, published, settings }: CompositionBase, { stores, walletCredits }: { stores: BillingStores; walletCredits: WalletCredits }): CreditNotes {
  const issuer = new CreditNoteIssuer({ notes: stores.creditNotes, invoices: stores.invoices, payments: stores.payments, clock, numberPrefix: settings.creditNoteNumberPrefix });
  const service = new CreditNoteService({ db, notes: stores.creditNotes, invoices: stores.invoices, issuer, wallets: walletCredits, logger, clock, published });
  const thresholdReturns = new ThresholdReturnNotes({
    db,
    invoices: stores.invoices,
    issuer,
    creditWallet: (note, requestId) => service.creditWallet(note, requestId),
    logger,
    clock,
    published,
  });
  return { issuer, service, thresholdReturns };
}
