import type { EntryStore } from '../entries/store';
import type { Ledger } from '../ledger/ledger';
import type { WalletStore } from '../wallets/store';
import type { UnbilledStore } from '../unbilled/store';
import type { InvoiceStore } from './store';

/** What the invoice verbs work with. */
export interface InvoiceDeps {
  ledger: Ledger;
  wallets: WalletStore;
  entries: EntryStore;
  invoices: InvoiceStore;
  /** Unbilled usage (ADR 0024): an allocated invoice's usage lines stop counting in the same transaction. */
  unbilled: UnbilledStore;
}
