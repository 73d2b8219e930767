/** The ledger's invariants (ledger/invariants.ts), where the wallet's own tests have always imported them. */
export { assertLedgerAddsUp } from '../ledger/invariants';
