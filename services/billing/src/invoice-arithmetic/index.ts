export * from './domain';
export { invoiceArithmetic } from './compute';
export { invoiceTotals } from './totals';
export { spreadByLargestRemainder } from './spread';
export { invoiceTax, creditNoteLineTax, percentageUnits, type TaxBehavior, type TaxRounding, type TaxRateInput, type TaxableLine, type LineTax, type LineRateTax, type InvoiceTax, type TaxBreakdownEntry, type NoteLineTax } from './tax';
