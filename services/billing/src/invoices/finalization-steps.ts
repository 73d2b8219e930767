import type { Trx } from '@billstream/db';
import type { Invoice } from './domain';
import type { FinalizedHook } from './finalized-hook';
import type { PostpaidRecorder } from './postpaid-recorder';

/**
 * What finalizing an invoice does besides its own transition, in the order the finalizer runs
 * it (ADR 0062): the folders above invoices/ implement the steps and `workflows/finalize-invoice.ts`
 * puts them together in that order, so the flow reads in one file instead of in the wiring.
 * Every step is required (the six optional hooks they replace let a composition forget one).
 */
export interface FinalizationSteps {
  /** Drafts made before their grace window ended are priced again first (BILLING_FINALIZE_DELAY > 0). */
  readonly reprices: boolean;
  /** 1. Before the wallet's allocation: the draft repriced (undefined: it is no longer a draft). */
  reprice(draft: Invoice, requestId: string): Promise<Invoice | undefined>;
  /** 1b. Before the allocation: the drafts taxed again with the rates and buyer of now (docs/api/taxes.md#invoices-bearing-tax); those no longer drafts, or changed meanwhile, left out. */
  tax(drafts: Invoice[]): Promise<Invoice[]>;
  /** 3. In the transaction, before the number: the CREDITS payment of a postpaid wallet. */
  postpaid: PostpaidRecorder;
  /** 4-5. The documents: links set before the save, the snapshot after it. */
  documents: FinalizedHook;
  /** 6. In the transaction, an invoice finalized with nothing remaining: what follows its payment is recorded (an invoiced top-up's settle). */
  paidInTransaction(trx: Trx, saved: Invoice): Promise<void>;
  /** 7. After the commit: the top-up's settlement, the excess credit, the threshold returns (never throws). */
  afterCommit(invoice: Invoice, requestId: string): Promise<void>;
}

